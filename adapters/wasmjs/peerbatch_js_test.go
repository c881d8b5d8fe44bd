package wasmjs

import (
	"bytes"
	"context"
	"errors"
	"syscall/js"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/getter"
)

// A peer's batch reaches the node through serve's body argument: a signed
// !get of a present and a missing key is answered with both, and a signed
// !purge empties the node.
func TestServePeerBatch(t *testing.T) {
	srv, loads := newServer(t, true)
	f := Func(srv)
	defer f.Release()
	c, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	send := func(req protocol.Request) response {
		t.Helper()
		hdr := map[string]any{}
		for k, vs := range req.Header {
			hdr[k] = vs[0]
		}
		body := js.Global().Get("Uint8Array").New(len(req.Body))
		js.CopyBytesToJS(body, req.Body)
		return call(t, f, req.Method, req.Path, hdr, js.Undefined(), body)
	}
	keys := []string{"Tom", "kkk"}
	req := c.NewBatchRequest(context.Background(), self, "scores", protocol.BatchGet, keys, false)
	r := send(req)
	h := protocol.Header{}
	for k, v := range r.header {
		h.Set(k, v)
	}
	var got []string
	err = c.ReadBatchResponse(context.Background(), req, r.status, h, int64(len(r.body)), bytes.NewReader([]byte(r.body)), keys,
		func(i int, v []byte, _ time.Duration, err error) {
			switch {
			case errors.Is(err, getter.ErrNotFound):
				got = append(got, keys[i]+" not found")
			case err != nil:
				got = append(got, keys[i]+" "+err.Error())
			default:
				got = append(got, keys[i]+" "+string(v))
			}
		})
	if err != nil || len(got) != 2 || got[0] != "Tom 630" || got[1] != "kkk not found" {
		t.Fatalf("the batch: %d, %v, %v", r.status, got, err)
	}
	if r := send(c.NewBatchRequest(context.Background(), self, "scores", protocol.BatchPurge, nil, false)); r.status != 200 {
		t.Fatalf("a signed purge: %d %q", r.status, r.body)
	}
	before := loads.Load()
	if r := send(c.NewRequest(context.Background(), self, "scores", "Tom", false)); r.status != 200 || r.body != "630" || loads.Load() != before+1 {
		t.Fatalf("after the purge: %d %q, %d loads; want Tom loaded again", r.status, r.body, loads.Load()-before)
	}
}
