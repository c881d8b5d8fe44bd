//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// docs/configuration.md, "Not found": with NotFoundTTL, "not found"
// is cached for that long, on the owner and on the nodes that asked it, so
// that a flood of requests for a missing key stops reaching the source (and
// the owner). Without it every Get asks again: a key created later is found
// at once.
func TestNotFoundTTLCachedOnOwnerAndAskers(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		t.Run(ttl.String(), func(t *testing.T) {
			var loads atomic.Int64
			var exists atomic.Bool
			src := func(int) getter.Getter {
				return getter.Func(func(_ context.Context, key string) ([]byte, error) {
					loads.Add(1)
					if !exists.Load() {
						return nil, getter.ErrNotFound
					}
					return []byte("v:" + key), nil
				})
			}
			nodes := nethttptest.Start(t, 3, &nethttptest.Options{Getter: src,
				GroupOptions: cache.GroupOptions{NotFoundTTL: ttl}})
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			const key, rounds = "later", 5
			for range rounds {
				for _, nd := range nodes {
					if _, err := nd.Group.Get(ctx, key); !errors.Is(err, getter.ErrNotFound) {
						t.Fatalf("%s: Get = %v; want ErrNotFound", nd.Addr, err)
					}
				}
			}
			owner := nodes[0].Owner(key)
			served := owner.Group.Stats().PeerRequests
			switch {
			case ttl > 0 && (loads.Load() != 1 || served != 2):
				t.Fatalf("NotFoundTTL %v: %d source loads, the owner served %d peer requests; want 1 and 2 (one per other node)",
					ttl, loads.Load(), served)
			case ttl == 0 && (loads.Load() != 3*rounds || served != 2*rounds):
				t.Fatalf("no NotFoundTTL: %d source loads, %d peer requests; want %d and %d", loads.Load(), served, 3*rounds, 2*rounds)
			}
			exists.Store(true)
			v, err := nodes[0].Group.Get(ctx, key)
			if ttl == 0 && (err != nil || v.String() != "v:"+key) {
				t.Fatalf("no NotFoundTTL: a key created later: Get = %q, %v; want it at once", v, err)
			}
			if ttl > 0 && !errors.Is(err, getter.ErrNotFound) {
				t.Fatalf("NotFoundTTL %v: Get within the TTL = %q, %v; want the cached not found", ttl, v, err)
			}
		})
	}
}
