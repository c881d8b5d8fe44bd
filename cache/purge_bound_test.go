package cache_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
)

// RemoveMany and Purge with a hung peer and a caller without a deadline
// (docs/writes.md, "Many keys and whole groups" and "Writes under faults": each node
// gets its own share of the caller's time, at most PeerPolicy.SlowAfter,
// 2 s, even without a deadline; the error names exactly the nodes that did
// not confirm, as Remove's does). The node that answered is done at once.
func TestBatchWritesToAHungPeerAreBounded(t *testing.T) {
	for _, op := range []string{"RemoveMany", "Purge"} {
		t.Run(op, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				db := batchDB()
				nodes := newMemCluster(t, db)
				keys := []string{"a1", "b1", "c1"}
				for _, n := range nodes {
					checkMany(t, getMany(t, n.group, keys), keys)
				}
				nodes[2].stop()
				defer func() { nodes[2].resume(); settleBubble() }()
				start := time.Now()
				var err error
				if op == "Purge" {
					err = nodes[0].group.Purge(context.Background())
				} else {
					err = nodes[0].group.RemoveMany(context.Background(), keys)
				}
				took := time.Since(start)
				var ue *cache.UpdateError
				if !errors.Is(err, cache.ErrPartialUpdate) || !errors.As(err, &ue) || len(ue.Failed) != 1 || ue.Failed["node2"] == nil {
					t.Fatalf("%s with node2 hung = %v; want an UpdateError naming node2 alone", op, err)
				}
				if took > 2*time.Second {
					t.Fatalf("%s without a deadline waited %v for a hung node; want at most SlowAfter (2 s)", op, took)
				}
				before := nodes[1].loads.Load()
				if v, err := nodes[1].group.Get(t.Context(), "b1"); err != nil || v.String() != "v:b1" {
					t.Fatalf("node1: Get(b1) = %q, %v", v, err)
				}
				if nodes[1].loads.Load() == before {
					t.Fatalf("node1 confirmed the %s but still served its old copy of b1", op)
				}
			})
		})
	}
}
