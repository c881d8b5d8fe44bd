//go:build !js

package nethttp_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
)

// Secure by default (PROTOCOL.md, "Writes" and "Batches"; docs/operations.md,
// "Security"): a node without a secret refuses every write a
// stranger sends it, well formed and marked as a peer's (PUT, DELETE,
// POST !remove, POST !purge), with 401, and keeps its values; with
// UnsignedWrites it takes the same requests. The values are checked on the
// node itself: a refusal must leave them in place, not only say so.
func TestUnsignedWritesChangeNothing(t *testing.T) {
	const key = "Tom"
	batch := func(keys ...string) []byte { // a count, then each key's length and bytes
		b := []byte{byte(len(keys))}
		for _, k := range keys {
			b = append(append(b, byte(len(k))), k...)
		}
		return b
	}
	writes := []struct {
		name, method, path string
		body               []byte
	}{
		{"PUT", http.MethodPut, key, []byte("forged")},
		{"DELETE", http.MethodDelete, key, nil},
		{"!remove", http.MethodPost, "!remove", batch(key)},
		{"!purge", http.MethodPost, "!purge", batch()},
	}
	for _, unsigned := range []bool{false, true} {
		for _, w := range writes {
			t.Run(fmt.Sprintf("UnsignedWrites=%v/%s", unsigned, w.name), func(t *testing.T) {
				nodes := nethttptest.Start(t, 1, &nethttptest.Options{PoolOptions: nethttp.PoolOptions{UnsignedWrites: unsigned}})
				nd := nodes[0]
				if v, err := nd.Group.Get(t.Context(), key); err != nil || v.String() != "v:"+key {
					t.Fatalf("Get = %q, %v", v, err)
				}
				req, err := http.NewRequestWithContext(t.Context(), w.method, nd.Addr+"/_geecache/scores/"+w.path, bytes.NewReader(w.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("X-Geecache-Peer", "1")
				if w.body != nil {
					req.Header.Set("X-Geecache-Checksum", fmt.Sprintf("%016x", xxhash.Sum64(w.body)))
					if w.method == http.MethodPost {
						req.Header.Set("Content-Type", "application/x-geecache-batch")
					}
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = res.Body.Close()
				want := http.StatusUnauthorized
				if unsigned {
					want = http.StatusOK
				}
				if res.StatusCode != want || (!unsigned && res.Header.Get("X-Geecache-Error") != "unauthorized") {
					t.Fatalf("an unsigned %s: %d %q; want %d", w.name, res.StatusCode, res.Header.Get("X-Geecache-Error"), want)
				}
				before := nd.Group.Stats().LocalLoads
				v, err := nd.Group.Get(t.Context(), key)
				changed := err != nil || v.String() != "v:"+key || nd.Group.Stats().LocalLoads != before
				if changed != unsigned {
					t.Fatalf("UnsignedWrites %v: after an unsigned %s, Get = %q, %v (%d loads): changed %v; want %v",
						unsigned, w.name, v, err, nd.Group.Stats().LocalLoads-before, changed, unsigned)
				}
			})
		}
	}
	http.DefaultClient.CloseIdleConnections()
}
