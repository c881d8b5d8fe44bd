package nethttp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
)

// A Remove and a Set with a 2 s deadline, from a node of a two-node
// cluster, of keys whose owner is a third peer that accepts connections
// and never answers: once each call has returned, neither healthy node
// serves the copy it held, and the error names exactly the hung owner.
func TestWriteWithHungOwnerPeer(t *testing.T) {
	nodes := startNodes(t, 2, false, &PoolOptions{Secret: []byte("k")})
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
	for i := 0; len(candidates) < 200; i++ {
		if k := fmt.Sprint("w", i); nodes[0].pool.Owner(k) == nodes[1].addr {
			candidates = append(candidates, k)
		}
	}
	setAll(three)
	for _, k := range candidates {
		if nodes[0].pool.Owner(k) == hung.addr && len(keys) < 2 {
			keys = append(keys, k)
		}
	}
	if len(keys) < 2 {
		t.Fatalf("no two keys move from node1 to the hung peer: %v", keys)
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
	fromMemory := func(n *node, k string) bool {
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		loads := n.db.count(k)
		v, err := n.group.Get(ctx, k)
		return err == nil && v.String() == "v:"+k && n.db.count(k) == loads
	}
	for _, n := range nodes {
		for _, k := range keys {
			if !fromMemory(n, k) {
				t.Fatalf("%s holds no copy of %q before the write", n.addr, k)
			}
		}
	}

	for i, write := range []struct {
		name string
		do   func(context.Context, string) error
	}{
		{"Remove", func(ctx context.Context, k string) error { return nodes[0].group.Remove(ctx, k) }},
		{"Set", func(ctx context.Context, k string) error { return nodes[0].group.Set(ctx, k, []byte("new"), 0) }},
	} {
		k := keys[i]
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		err := write.do(ctx, k)
		cancel()
		var ue *cache.UpdateError
		if !errors.As(err, &ue) {
			t.Fatalf("%s: %v; want an UpdateError", write.name, err)
		}
		if got := slices.Sorted(maps.Keys(ue.Failed)); !slices.Equal(got, []string{hung.addr}) {
			t.Errorf("%s: the error names %v; want exactly the hung owner %s: %v", write.name, got, hung.addr, err)
		}
		for _, n := range nodes {
			if fromMemory(n, k) {
				t.Errorf("%s: %s, healthy, still serves its old copy after the call returned", write.name, n.addr)
			}
		}
	}
}
