package nethttp

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// Through a cache.Group, a bad peer never yields a wrong value, now or
// later: the node loads the bad peer's keys itself, and once the bad peer
// is gone from the ring the values it held are the right ones.
func TestBadPeerNeverPoisonsTheGroup(t *testing.T) {
	noLeaks(t)
	garbage := []byte("garbage")
	msg := []byte("not exist\n")
	for name, tc := range map[string]struct {
		answer func(*http.Request, net.Conn) bool
		opts   PoolOptions
	}{
		"garbage 200":    {answer: rawAnswer("HTTP/1.1 200 OK\nContent-Length: 7", garbage, false)},
		"wrong checksum": {answer: rawAnswer("HTTP/1.1 200 OK\nContent-Length: 7\nX-Geecache-Checksum: "+protocol.Checksum([]byte("v:x")), garbage, false)},
		"forged value, secret": {
			answer: rawAnswer("HTTP/1.1 200 OK\nContent-Length: 7\nX-Geecache-Checksum: "+protocol.Checksum(garbage), garbage, false),
			opts:   PoolOptions{Cluster: Cluster{Secret: []byte("k")}},
		},
		"forged not-found, secret": {
			answer: rawAnswer("HTTP/1.1 404 Not Found\nContent-Length: 10\nX-Geecache-Error: not_found\nX-Geecache-Checksum: "+protocol.Checksum(msg), msg, false),
			opts:   PoolOptions{Cluster: Cluster{Secret: []byte("k")}},
		},
		"never answers": {answer: hang, opts: PoolOptions{Timeout: 20 * time.Millisecond}},
	} {
		t.Run(name, func(t *testing.T) {
			bad := startFakePeer(t, tc.answer)
			n := startNodes(t, 1, false, &tc.opts)[0]
			mustSet(t, n.pool, n.addr, bad.addr)
			var keys []string
			for i := 0; len(keys) < 5 && i < 10000; i++ {
				if k := fmt.Sprintf("key-%d", i); n.pool.Owner(k) == bad.addr {
					keys = append(keys, k)
				}
			}
			if len(keys) < 5 {
				t.Fatalf("only %d of 10000 keys belong to the bad peer", len(keys))
			}
			for _, k := range keys {
				if v, err := n.group.Get(t.Context(), k); err != nil || v.String() != "v:"+k {
					t.Fatalf("Get(%q) with the bad peer = %q, %v; want %q", k, v.String(), err, "v:"+k)
				}
			}
			mustSet(t, n.pool, n.addr) // the bad peer is gone
			for _, k := range keys {
				if v, err := n.group.Get(t.Context(), k); err != nil || v.String() != "v:"+k {
					t.Fatalf("Get(%q) after the bad peer left = %q, %v; want %q", k, v.String(), err, "v:"+k)
				}
				if c := n.db.count(k); c != 1 {
					t.Fatalf("%q loaded %d times; want once (the fallback's value kept)", k, c)
				}
			}
			n.pool.Close()
		})
	}
}
