//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// docs/resilience.md's promise, "Hedging: for a peer that does not answer, never for
// a source that is slow": however many nodes ask for a cold key behind a slow
// source, it is loaded once in the cluster, warm cluster or cold. Here with
// the default PeerPolicy over net/http (HTTP/1.1 and Multiplex), on a warm
// cluster: every node has fetched keys from the others, so its hedge delay
// has dropped to its floor, HedgeMin, far below the 300 ms source. Only
// the owner's 102 Processing keeps the other nodes from hedging. Hedges
// are counted from after the warm-up. HedgeMin is 100 ms here, not the
// default 10 ms: on a test machine loaded by -race and other packages a
// 102 can take longer than 10 ms to be read, which hedges as designed
// (docs/resilience.md, "Hedging"); 100 ms is still well below the source, so
// without the 102 every asking node hedges and the test fails.
func TestSlowSourceOnWarmClusterLoadsOnce(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(fmt.Sprintf("multiplex=%v", mux), func(t *testing.T) {
			var loads sync.Map // key -> *atomic.Int64, over the whole cluster
			count := func(key string) int64 {
				v, _ := loads.LoadOrStore(key, new(atomic.Int64))
				return v.(*atomic.Int64).Load()
			}
			src := func(int) getter.Getter {
				return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
					v, _ := loads.LoadOrStore(key, new(atomic.Int64))
					v.(*atomic.Int64).Add(1)
					if strings.HasPrefix(key, "slow") {
						select {
						case <-time.After(300 * time.Millisecond):
						case <-ctx.Done():
							return nil, ctx.Err()
						}
					}
					if strings.HasPrefix(key, "slow-missing") {
						return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
					}
					return []byte("v:" + key), nil
				})
			}
			var gopts cache.GroupOptions
			gopts.PeerPolicy.HedgeMin = 100 * time.Millisecond
			nodes := nethttptest.Start(t, 3, &nethttptest.Options{Getter: src, GroupOptions: gopts,
				PoolOptions: nethttp.PoolOptions{Multiplex: mux}})
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			// Warm up: each node fetches 32 keys, most owned by another node.
			for _, nd := range nodes {
				for i := range 32 {
					if _, err := nd.Group.Get(ctx, fmt.Sprint("warm", i)); err != nil {
						t.Fatal(err)
					}
				}
			}
			hedges := func() (n int64) {
				for _, nd := range nodes {
					n += nd.Group.Stats().Hedges
				}
				return n
			}
			for _, key := range []string{"slow-present", "slow-missing"} {
				before := hedges()
				var wg sync.WaitGroup
				for i := range 9 {
					nd := nodes[i%3]
					wg.Go(func() {
						v, err := nd.Group.Get(ctx, key)
						switch {
						case key == "slow-present" && (err != nil || v.String() != "v:"+key):
							t.Errorf("%s: Get(%q) = %q, %v", nd.Addr, key, v, err)
						case key == "slow-missing" && !errors.Is(err, getter.ErrNotFound):
							t.Errorf("%s: Get(%q) = %v; want ErrNotFound", nd.Addr, key, err)
						}
					})
				}
				wg.Wait()
				if got, h := count(key), hedges()-before; got != 1 || h != 0 {
					t.Fatalf("9 concurrent Gets of %q over 3 warm nodes: %d source loads, %d hedges; want 1 and 0",
						key, got, h)
				}
			}
		})
	}
}
