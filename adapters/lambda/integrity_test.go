//go:build !js

package lambda

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/getter"
)

// The Lambda handler answers protocol version 2: every response, its own
// errors included, carries the checksum and, with a secret, the signature
// a protocol.Client checks; a request signed for another node is refused.
func TestHandlerSealsResponses(t *testing.T) {
	secret := []byte("s3cret")
	for _, withSecret := range []bool{false, true} {
		var s []byte
		if withSecret {
			s = secret
		}
		n := newTestNode(t, 0)
		h := newTestHandler(t, n.reg, &protocol.ServerOptions{Secret: s})
		c := protoClient(t, s)
		for _, tc := range []struct {
			key, body string
			b64       bool
			want      error
			value     string
		}{
			{key: "Jack", value: "589"},
			{key: "nobody", want: getter.ErrNotFound},
			{key: "Jack", body: "%%%", b64: true, want: protocol.ErrBadRequest}, // the handler's own error
		} {
			req := c.NewRequest(t.Context(), testSelf, "scores", tc.key, false)
			res, body, _ := invoke(t, h, urlEvent(t, "GET", req.Path, req.Header, tc.body, tc.b64))
			hdr := http.Header{}
			for k, v := range res.Headers {
				hdr.Set(k, v)
			}
			if hdr.Get(protocol.HeaderChecksum) == "" || (hdr.Get(protocol.HeaderSignature) != "") != withSecret {
				t.Fatalf("secret %v, %s: headers %v; want a checksum, and a signature with a secret", withSecret, tc.key, res.Headers)
			}
			v, err := c.ReadResponse(t.Context(), req, res.StatusCode, hdr, int64(len(body)), bytes.NewReader(body))
			if tc.want == nil && (err != nil || string(v) != tc.value) || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("secret %v, %s: %q, %v; want %q, %v", withSecret, tc.key, v, err, tc.value, tc.want)
			}
		}
	}
	n := newTestNode(t, 0)
	h := newTestHandler(t, n.reg, &protocol.ServerOptions{Secret: secret})
	req := protoClient(t, secret).NewRequest(t.Context(), "https://other.lambda-url.eu-west-1.on.aws", "scores", "Jack", false)
	if res, body, _ := invoke(t, h, urlEvent(t, "GET", req.Path, req.Header, "", false)); res.StatusCode != 401 || n.loads.Load() != 0 {
		t.Fatalf("signed for another node: %d %q, %d loads; want 401 and none", res.StatusCode, body, n.loads.Load())
	}
}
