//go:build !js

package nethttp_test

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
)

// Through a cache.Group, a bad peer never yields a wrong value, now or
// later: the node loads the bad peer's keys itself, and once the bad peer
// is gone from the ring the values it held are the right ones.
func TestBadPeerNeverPoisonsTheGroup(t *testing.T) {
	nethttp.NoLeaks(t)
	garbage := []byte("garbage")
	msg := []byte("not exist\n")
	for name, tc := range map[string]struct {
		answer func(*http.Request, net.Conn) bool
		opts   nethttp.PoolOptions
	}{
		"garbage 200":    {answer: nethttp.RawAnswer("HTTP/1.1 200 OK\nContent-Length: 7", garbage, false)},
		"wrong checksum": {answer: nethttp.RawAnswer("HTTP/1.1 200 OK\nContent-Length: 7\nX-Geecache-Checksum: "+protocol.Checksum([]byte("v:x")), garbage, false)},
		"forged value, secret": {
			answer: nethttp.RawAnswer("HTTP/1.1 200 OK\nContent-Length: 7\nX-Geecache-Checksum: "+protocol.Checksum(garbage), garbage, false),
			opts:   nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte("k")}},
		},
		"forged not-found, secret": {
			answer: nethttp.RawAnswer("HTTP/1.1 404 Not Found\nContent-Length: 10\nX-Geecache-Error: not_found\nX-Geecache-Checksum: "+protocol.Checksum(msg), msg, false),
			opts:   nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte("k")}},
		},
		"never answers": {answer: nethttp.Hang, opts: nethttp.PoolOptions{Timeout: 20 * time.Millisecond}},
	} {
		t.Run(name, func(t *testing.T) {
			bad := nethttp.StartFakePeer(t, tc.answer)
			var src loads
			n := nethttptest.Start(t, 1, &nethttptest.Options{Getter: src.getter, PoolOptions: tc.opts,
				GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})[0]
			if err := n.Pool.Set(n.Addr, bad); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for i := 0; len(keys) < 5 && i < 10000; i++ {
				if k := fmt.Sprintf("key-%d", i); n.Pool.Owner(k) == bad {
					keys = append(keys, k)
				}
			}
			if len(keys) < 5 {
				t.Fatalf("only %d of 10000 keys belong to the bad peer", len(keys))
			}
			for _, k := range keys {
				if v, err := n.Group.Get(t.Context(), k); err != nil || v.String() != "v:"+k {
					t.Fatalf("Get(%q) with the bad peer = %q, %v; want %q", k, v.String(), err, "v:"+k)
				}
			}
			if err := n.Pool.Set(n.Addr); err != nil { // the bad peer is gone
				t.Fatal(err)
			}
			for _, k := range keys {
				if v, err := n.Group.Get(t.Context(), k); err != nil || v.String() != "v:"+k {
					t.Fatalf("Get(%q) after the bad peer left = %q, %v; want %q", k, v.String(), err, "v:"+k)
				}
				if c := src.count(0, k); c != 1 {
					t.Fatalf("%q loaded %d times; want once (the fallback's value kept)", k, c)
				}
			}
		})
	}
}
