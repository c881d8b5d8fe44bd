//go:build !js

package nethttp_test

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

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
)

// 100 writes (50 Removes, 50 Sets, at once), each with a 2 s deadline,
// from a node of a two-node cluster, of keys whose owner is a third peer
// that accepts connections and never answers: once the calls have
// returned, neither healthy node serves a copy it held of any of the keys,
// and each error names exactly the hung owner.
func TestWriteWithHungOwnerPeer(t *testing.T) {
	const n = 100
	var src loads
	all := nethttptest.Start(t, 3, &nethttptest.Options{Getter: src.getter,
		PoolOptions:  nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte("k")}},
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	nodes, hung := all[:2], all[2]
	hung.SetFault(nethttptest.Fault{Hang: true})
	two := []string{nodes[0].Addr, nodes[1].Addr}
	three := append(slices.Clone(two), hung.Addr)
	setAll := func(addrs []string) {
		for _, n := range nodes {
			if err := n.Pool.Set(addrs...); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Keys that node1 owns in the two-node ring and the hung peer in the
	// three-node one, so that both healthy nodes hold a copy (node1 in its
	// main cache, node0 in its hot cache) when the hung peer joins.
	setAll(two)
	var candidates, keys []string
	for i := 0; len(candidates) < 20*n; i++ {
		if k := fmt.Sprint("w", i); nodes[0].Pool.Owner(k) == nodes[1].Addr {
			candidates = append(candidates, k)
		}
	}
	setAll(three)
	for _, k := range candidates {
		if nodes[0].Pool.Owner(k) == hung.Addr && len(keys) < n {
			keys = append(keys, k)
		}
	}
	if len(keys) < n {
		t.Fatalf("only %d keys move from node1 to the hung peer", len(keys))
	}
	setAll(two)
	for _, k := range keys {
		if v, err := nodes[0].Group.Get(t.Context(), k); err != nil || v.String() != "v:"+k {
			t.Fatalf("warming %q: %q, %v", k, v, err)
		}
	}
	setAll(three)
	// While the owner hangs, a Get that answers within 200 ms without a
	// load from any node's source (the asked node's, or the next node's
	// on the ring, which takes the keys of an ejected owner) answers from
	// memory: the copy from before the write.
	loadsOf := func(k string) (n int) {
		for j := range nodes {
			n += src.count(j, k)
		}
		return n
	}
	fromMemory := func(i int, k string) bool {
		nd := nodes[i]
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		before := loadsOf(k)
		v, err := nd.Group.Get(ctx, k)
		return err == nil && v.String() == "v:"+k && loadsOf(k) == before
	}
	for i, nd := range nodes {
		if !fromMemory(i, keys[0]) {
			t.Fatalf("%s holds no copy of %q before the writes", nd.Addr, keys[0])
		}
	}

	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			if i%2 == 0 {
				errs[i] = nodes[0].Group.Remove(ctx, k)
			} else {
				errs[i] = nodes[0].Group.Set(ctx, k, []byte("new"), 0)
			}
		})
	}
	wg.Wait()
	misnamed := 0
	var stale atomic.Int64
	for i, k := range keys {
		var ue *cache.UpdateError
		if !errors.As(errs[i], &ue) || !slices.Equal(slices.Sorted(maps.Keys(ue.Failed)), []string{hung.Addr}) {
			if misnamed++; misnamed == 1 {
				t.Errorf("write of %q: %v; want an UpdateError naming exactly the hung owner %s", k, errs[i], hung.Addr)
			}
		}
		for j := range nodes {
			// What the node would serve from memory, asked from memory
			// only (a Get could also find a copy loaded after the write).
			if v, _, err := nethttp.PeerPeek(t.Context(), nethttp.LocalPeer(nodes[j].Registry), "scores", k); err == nil && string(v) == "v:"+k {
				stale.Add(1)
			}
		}
	}
	t.Logf("after %d writes with a hung owner: %d stale copies on the 2 healthy nodes, %d errors not naming exactly the owner", n, stale.Load(), misnamed)
	if stale.Load() > 0 || misnamed > 0 {
		t.Errorf("%d stale copies, %d errors naming other peers; want 0, 0", stale.Load(), misnamed)
	}
}
