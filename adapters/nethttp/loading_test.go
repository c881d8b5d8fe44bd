//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// startGatedNodes starts n nodes with hedging on, the hedge delay at least
// hedge (and HedgeMax 30 s, the longest wait for an owner that is
// loading); their sources wait for gate to close. loads[i] counts node i's
// source loads.
func startGatedNodes(t *testing.T, n int, hedge time.Duration, gate <-chan struct{}) (nodes []*nethttptest.Node, loads []atomic.Int64) {
	t.Helper()
	loads = make([]atomic.Int64, n)
	src := func(i int) getter.Getter {
		return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
			loads[i].Add(1)
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if key[:1] == "m" {
				return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
			}
			return []byte("v:" + key), nil
		})
	}
	nodes = nethttptest.Start(t, n, &nethttptest.Options{Getter: src,
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{HedgeMin: hedge, HedgeMax: 30 * time.Second}}})
	return nodes, loads
}

// An owner that has to load from a slow source says so (102 Processing),
// and the nodes that asked wait for it instead of hedging: concurrent Gets
// of a cold key from every node load it once in the cluster, a present key
// and a missing one alike. The source is held for ten hedge delays, so
// without the owner's word every non-owner would hedge.
func TestSlowSourceBehindLiveOwnerLoadsOnce(t *testing.T) {
	const hedge = 100 * time.Millisecond
	for _, key := range []string{"present", "missing"} {
		t.Run(key, func(t *testing.T) {
			gate := make(chan struct{})
			nodes, nodeLoads := startGatedNodes(t, 3, hedge, gate)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for i := range 9 {
				nd := nodes[i%3]
				wg.Go(func() {
					v, err := nd.Group.Get(ctx, key)
					switch {
					case key == "present" && (err != nil || v.String() != "v:present"):
						t.Errorf("%s: Get = %q, %v", nd.Addr, v, err)
					case key == "missing" && !errors.Is(err, getter.ErrNotFound):
						t.Errorf("%s: Get = %v; want ErrNotFound", nd.Addr, err)
					}
				})
			}
			time.Sleep(10 * hedge) // time for any hedge to start (not a timing assertion)
			close(gate)
			wg.Wait()
			var loads, hedges int64
			for i, nd := range nodes {
				loads += nodeLoads[i].Load()
				hedges += nd.Group.Stats().Hedges
			}
			if loads != 1 || hedges != 0 {
				t.Fatalf("9 concurrent Gets of %q over 3 nodes: %d source loads, %d hedges; want 1 and 0", key, loads, hedges)
			}
		})
	}
}
