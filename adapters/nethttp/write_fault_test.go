package nethttp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
)

// 100 writes (50 Removes, 50 Sets, at once), each with a 2 s deadline,
// from a node of a two-node cluster, of keys whose owner is a third peer
// that accepts connections and never answers: once the calls have
// returned, neither healthy node serves a copy it held of any of the keys,
// and each error names exactly the hung owner.
func TestWriteWithHungOwnerPeer(t *testing.T) {
	const n = 100
	nodes := startNodes(t, 2, false, &PoolOptions{Cluster: Cluster{Secret: []byte("k")}})
	hung, _ := startHungPeer(t)
	two := []string{nodes[0].addr, nodes[1].addr}
	three := append(slices.Clone(two), hung.addr)
	setAll := func(addrs []string) {
		for _, n := range nodes {
			mustSet(t, n.pool, addrs...)
		}
	}
	// Runs before the fake peer is closed: with no peers left, the
	// background retries toward it end at their next attempt.
	t.Cleanup(func() { setAll(nil) })

	// Keys that node1 owns in the two-node ring and the hung peer in the
	// three-node one, so that both healthy nodes hold a copy (node1 in its
	// main cache, node0 in its hot cache) when the hung peer joins.
	setAll(two)
	var candidates, keys []string
	for i := 0; len(candidates) < 20*n; i++ {
		if k := fmt.Sprint("w", i); nodes[0].pool.Owner(k) == nodes[1].addr {
			candidates = append(candidates, k)
		}
	}
	setAll(three)
	for _, k := range candidates {
		if nodes[0].pool.Owner(k) == hung.addr && len(keys) < n {
			keys = append(keys, k)
		}
	}
	if len(keys) < n {
		t.Fatalf("only %d keys move from node1 to the hung peer", len(keys))
	}
	setAll(two)
	for _, k := range keys {
		if v, err := nodes[0].group.Get(t.Context(), k); err != nil || v.String() != "v:"+k {
			t.Fatalf("warming %q: %q, %v", k, v, err)
		}
	}
	setAll(three)
	// While the owner hangs, a Get that answers within 200 ms without a
	// load from the node's source (as it does once it has ejected the
	// owner) answers from its memory: the copy from before the write.
	fromMemory := func(nd *node, k string) bool {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		loads := nd.db.count(k)
		v, err := nd.group.Get(ctx, k)
		return err == nil && v.String() == "v:"+k && nd.db.count(k) == loads
	}
	for _, nd := range nodes {
		if !fromMemory(nd, keys[0]) {
			t.Fatalf("%s holds no copy of %q before the writes", nd.addr, keys[0])
		}
	}

	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			if i%2 == 0 {
				errs[i] = nodes[0].group.Remove(ctx, k)
			} else {
				errs[i] = nodes[0].group.Set(ctx, k, []byte("new"), 0)
			}
		})
	}
	wg.Wait()
	misnamed := 0
	var stale atomic.Int64
	for i, k := range keys {
		var ue *cache.UpdateError
		if !errors.As(errs[i], &ue) || !slices.Equal(slices.Sorted(maps.Keys(ue.Failed)), []string{hung.addr}) {
			if misnamed++; misnamed == 1 {
				t.Errorf("write of %q: %v; want an UpdateError naming exactly the hung owner %s", k, errs[i], hung.addr)
			}
		}
		for _, nd := range nodes {
			wg.Go(func() { // at once: each Get that goes to the hung owner waits 200 ms
				if fromMemory(nd, k) {
					stale.Add(1)
				}
			})
		}
	}
	wg.Wait()
	t.Logf("after %d writes with a hung owner: %d stale copies on the 2 healthy nodes, %d errors not naming exactly the owner", n, stale.Load(), misnamed)
	if stale.Load() > 0 || misnamed > 0 {
		t.Errorf("%d stale copies, %d errors naming other peers; want 0, 0", stale.Load(), misnamed)
	}
}
