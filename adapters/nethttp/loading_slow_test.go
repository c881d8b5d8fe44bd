//go:build !js && !wasip1

package nethttp_test

import (
	"context"
	"flag"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/getter"
)

var slowSources = flag.String("slow.sources", "1.5s,4s", "the source latencies of TestSourceSlowerThanHedgeMaxLoadsOnce (add 30s by hand)")

// A source far slower than the hedge's longest wait (PeerPolicy.HedgeMax,
// 1 s by default) is still loaded once in the cluster: the owner repeats
// that it is loading while the load runs, and the asking nodes hedge only
// after HedgeMax without a word from it. Three nodes, three concurrent
// Gets of one cold key on each, over HTTP/1.1 and multiplexed.
func TestSourceSlowerThanHedgeMaxLoadsOnce(t *testing.T) {
	var latencies []time.Duration
	for _, s := range splitComma(*slowSources) {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("-slow.sources: %v", err)
		}
		latencies = append(latencies, d)
	}
	for _, mux := range []bool{false, true} {
		for _, d := range latencies {
			name := map[bool]string{false: "HTTP/1.1", true: "multiplexed"}[mux] + ", source " + d.String()
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var loads atomic.Int64
				src := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
					loads.Add(1)
					select {
					case <-time.After(d):
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return []byte("v:" + key), nil
				})
				nodes := nethttptest.Start(t, 3, &nethttptest.Options{
					Getter:      func(int) getter.Getter { return src },
					PoolOptions: nethttp.PoolOptions{Multiplex: mux},
				})
				ctx, cancel := context.WithTimeout(t.Context(), d+30*time.Second)
				defer cancel()
				var wg sync.WaitGroup
				for i := range 9 {
					nd := nodes[i%3]
					wg.Go(func() {
						if v, err := nd.Group.Get(ctx, "report"); err != nil || v.String() != "v:report" {
							t.Errorf("%s: Get = %q, %v", nd.Addr, v, err)
						}
					})
				}
				wg.Wait()
				var hedges int64
				for _, nd := range nodes {
					hedges += nd.Group.Stats().Hedges
				}
				if n := loads.Load(); n != 1 || hedges != 0 {
					t.Fatalf("9 concurrent Gets over 3 nodes of a key whose source takes %v: %d loads, %d hedges; want 1 and 0", d, n, hedges)
				}
			})
		}
	}
}

func splitComma(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}
