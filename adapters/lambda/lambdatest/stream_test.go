//go:build !js

package lambdatest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// TestFrontStream: a RESPONSE_STREAM answer (prelude, 8 NUL bytes, raw
// body), as the emulator passes it through, becomes the HTTP response; a
// prelude without its delimiter, or trailing bytes after a BUFFERED
// answer, is a 502.
func TestFrontStream(t *testing.T) {
	body := []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, '{'} // NULs inside the body too
	prelude, _ := json.Marshal(map[string]any{"statusCode": 404, "headers": map[string]string{"x-geecache-error": "not_found"}})
	stream := append(append(append([]byte{}, prelude...), 0, 0, 0, 0, 0, 0, 0, 0), body...)
	front := newFront(t, fakeRuntime(t, func(context.Context, []byte) ([]byte, error) { return stream, nil }))
	code, h, got := httpGet(t, front.URL+"/x")
	if code != http.StatusNotFound || h.Get("X-Geecache-Error") != "not_found" || !bytes.Equal(got, body) {
		t.Fatalf("stream: %d %v %q", code, h, got)
	}

	for name, raw := range map[string][]byte{
		"no delimiter":  append(append([]byte{}, prelude...), 0, 0, 0, 'x'),
		"trailing junk": append(append([]byte{}, prelude...), " x"...),
	} {
		front := newFront(t, fakeRuntime(t, func(context.Context, []byte) ([]byte, error) { return raw, nil }))
		if code, _, body := httpGet(t, front.URL+"/x"); code != http.StatusBadGateway {
			t.Errorf("%s: %d %q, want 502", name, code, body)
		}
	}
}
