package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// batchKeys are keys of every node of a mem cluster, and one missing key.
var batchKeys = []string{"a1", "b1", "c1", "a2", "b2", "c2", "b-missing", "c3"}

func batchDB() *sync.Map {
	var db sync.Map
	for _, k := range batchKeys {
		if k != "b-missing" {
			db.Store(k, "v:"+k)
		}
	}
	return &db
}

// getMany returns GetMany's results as "value" or "err: ..." strings, and
// checks that each is called once per key, in order.
func getMany(t *testing.T, g *cache.Group, keys []string) []string {
	t.Helper()
	out := make([]string, 0, len(keys))
	g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
		if i != len(out) {
			t.Fatalf("each called with index %d, want %d", i, len(out))
		}
		switch {
		case errors.Is(err, getter.ErrNotFound):
			out = append(out, "not found")
		case err != nil:
			out = append(out, "err: "+err.Error())
		default:
			out = append(out, v.String())
		}
	})
	if len(out) != len(keys) {
		t.Fatalf("each called %d times for %d keys", len(out), len(keys))
	}
	return out
}

func checkMany(t *testing.T, got []string, keys []string) {
	t.Helper()
	for i, k := range keys {
		want := "v:" + k
		if k == "b-missing" {
			want = "not found"
		}
		if got[i] != want {
			t.Errorf("key %s: %q, want %q", k, got[i], want)
		}
	}
}

// GetMany asks each owner once for all its keys, answers the missing key
// as not found (for it alone), and answers a second time from memory.
func TestGetManyOneBatchPerOwner(t *testing.T) {
	nodes := newMemCluster(t, batchDB())
	checkMany(t, getMany(t, nodes[0].group, batchKeys), batchKeys)
	if b1, b2 := nodes[1].batches.Load(), nodes[2].batches.Load(); b1 != 1 || b2 != 1 {
		t.Fatalf("batches to node1, node2 = %d, %d; want 1 each", b1, b2)
	}
	if n := nodes[0].loads.Load(); n != 2 {
		t.Fatalf("node0 loaded %d keys, want its own 2", n)
	}
	checkMany(t, getMany(t, nodes[0].group, batchKeys), batchKeys)
	if b1, b2 := nodes[1].batches.Load(), nodes[2].batches.Load(); b1 != 2 || b2 != 1 {
		// b-missing is not cached (no NotFoundTTL): asked again, alone in its batch
		t.Fatalf("after a second GetMany: batches = %d, %d; want 2, 1 (only the missing key asked again)", b1, b2)
	}
}

// A peer of the previous version (requests of many keys unsupported) is
// asked key by key, with the same results.
func TestGetManyOldPeerAsksKeyByKey(t *testing.T) {
	nodes := newMemCluster(t, batchDB())
	nodes[1].noBatch.Store(true)
	checkMany(t, getMany(t, nodes[0].group, batchKeys), batchKeys)
	if s := nodes[1].group.Stats(); s.PeerRequests != 3 {
		t.Fatalf("node1 served %d single requests, want 3 (b1, b2, b-missing)", s.PeerRequests)
	}
}

// An owner that fails costs its keys a local load, and only its keys.
func TestGetManyFailedOwnerFallsBackForItsKeys(t *testing.T) {
	nodes := newMemCluster(t, batchDB())
	nodes[1].down.Store(true)
	checkMany(t, getMany(t, nodes[0].group, batchKeys), batchKeys)
	if n := nodes[0].loads.Load(); n != 5 {
		t.Fatalf("node0 loaded %d keys, want 5 (its 2, and node1's 3)", n)
	}
	if n := nodes[2].loads.Load(); n != 3 {
		t.Fatalf("node2 loaded %d keys, want its 3", n)
	}
	if s := nodes[0].group.Stats(); s.FallbackLoads != 3 {
		t.Fatalf("FallbackLoads = %d, want 3", s.FallbackLoads)
	}
}

// A key that a Get is fetching from its owner when GetMany asks for it is
// fetched once: the GetMany waits for the Get's load.
func TestGetManySharesALoadWithGet(t *testing.T) {
	nodes := newMemCluster(t, batchDB())
	nodes[1].stop()
	ctx := t.Context()
	got := make(chan string, 1)
	go func() {
		v, err := nodes[0].group.Get(ctx, "b1")
		got <- fmt.Sprint(v, err)
	}()
	testkit.WaitFor(t, "the Get's fetch", func() bool { return nodes[0].group.Stats().DedupWaits == 0 && inFlight(nodes[0]) })
	done := make(chan []string, 1)
	go func() { done <- getMany(t, nodes[0].group, []string{"b1", "b2"}) }()
	testkit.WaitFor(t, "GetMany to join", func() bool { return nodes[0].group.Stats().DedupWaits == 1 })
	nodes[1].resume()
	checkMany(t, <-done, []string{"b1", "b2"})
	if v := <-got; v != "v:b1 <nil>" {
		t.Fatalf("Get = %s", v)
	}
	if n := nodes[1].loads.Load(); n != 2 {
		t.Fatalf("node1 loaded %d times, want 2 (b1 once, b2)", n)
	}
}

// inFlight reports whether n has a fetch to a peer in flight.
func inFlight(n *memNode) bool {
	for _, p := range n.group.Stats().Peers {
		if p.InFlight > 0 {
			return true
		}
	}
	return false
}

// RemoveMany drops the keys on every node with one request per owner, and
// one more to each owner once all have confirmed (an owner of one key may
// have fetched another owner's old value meanwhile); the next Get anywhere
// loads the new values.
func TestRemoveManyReachesEveryNode(t *testing.T) {
	db := batchDB()
	nodes := newMemCluster(t, db)
	keys := []string{"a1", "b1", "c1"}
	for _, n := range nodes {
		checkMany(t, getMany(t, n.group, keys), keys)
	}
	for _, k := range keys {
		db.Store(k, "new:"+k)
	}
	before := []int64{nodes[1].batches.Load(), nodes[2].batches.Load()}
	if err := nodes[0].group.RemoveMany(t.Context(), keys); err != nil {
		t.Fatal(err)
	}
	if b1, b2 := nodes[1].batches.Load()-before[0], nodes[2].batches.Load()-before[1]; b1 != 2 || b2 != 2 {
		t.Fatalf("RemoveMany sent %d, %d requests to node1, node2, the owners of b1 and c1; want 2 each", b1, b2)
	}
	for _, n := range nodes {
		for _, k := range keys {
			if v, err := n.group.Get(t.Context(), k); err != nil || v.String() != "new:"+k {
				t.Fatalf("%s: Get(%s) = %q, %v after RemoveMany; want the new value", n.name, k, v, err)
			}
		}
	}
	if err := nodes[0].group.RemoveMany(t.Context(), []string{"never-held"}); err != nil {
		t.Fatalf("RemoveMany of a key no node holds: %v", err)
	}
}

// Purge drops every value (hot copies too) on every node, with two
// requests per peer (the second once every peer has taken the first); a
// peer that does not confirm is named.
func TestPurgeReachesEveryNode(t *testing.T) {
	db := batchDB()
	nodes := newMemCluster(t, db)
	for _, n := range nodes {
		checkMany(t, getMany(t, n.group, batchKeys), batchKeys)
	}
	for _, k := range batchKeys {
		db.Store(k, "new:"+k)
	}
	before := []int64{nodes[1].batches.Load(), nodes[2].batches.Load()}
	if err := nodes[0].group.Purge(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b1, b2 := nodes[1].batches.Load()-before[0], nodes[2].batches.Load()-before[1]; b1 != 2 || b2 != 2 {
		t.Fatalf("Purge sent %d, %d requests to node1, node2; want 2 each", b1, b2)
	}
	for _, n := range nodes {
		if s := n.group.Stats(); s.Main.Items != 0 || s.Hot.Items != 0 {
			t.Fatalf("%s holds %d + %d entries after Purge", n.name, s.Main.Items, s.Hot.Items)
		}
	}
	for _, n := range nodes {
		for _, k := range batchKeys {
			if v, err := n.group.Get(t.Context(), k); err != nil || v.String() != "new:"+k {
				t.Fatalf("%s: Get(%s) = %q, %v after Purge; want the new value", n.name, k, v, err)
			}
		}
	}
	nodes[2].down.Store(true)
	var ue *cache.UpdateError
	if err := nodes[0].group.Purge(t.Context()); !errors.As(err, &ue) || len(ue.Failed) != 1 || ue.Failed["node2"] == nil {
		t.Fatalf("Purge with node2 down = %v; want an UpdateError naming node2", err)
	}
}

// A load in flight during a Purge hands its value to its waiter, but the
// cache does not keep it and no later Get joins it: the value loaded
// before the purge never comes back after it.
func TestPurgeDuringLoadDoesNotResurrect(t *testing.T) {
	var version, loads atomic.Int64
	release := make(chan struct{})
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		n := loads.Add(1)
		v := fmt.Sprintf("v%d", version.Load())
		if n == 1 {
			<-release
		}
		return []byte(v), nil
	})
	g := newGroup(t, 1<<10, src)
	ctx := t.Context()
	first := make(chan string, 1)
	go func() { v, _ := g.Get(ctx, "k"); first <- v.String() }()
	testkit.WaitFor(t, "the slow load", func() bool { return loads.Load() == 1 })
	version.Store(1)
	if err := g.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := g.Get(ctx, "k"); err != nil || v.String() != "v1" {
		t.Fatalf("Get after Purge = %q, %v; want the new v1", v, err)
	}
	close(release)
	if v := <-first; v != "v0" {
		t.Fatalf("the old load's waiter got %q, want v0", v)
	}
	if v, _ := g.Get(ctx, "k"); v.String() != "v1" {
		t.Fatalf("after the old load ended, Get = %q; want v1", v)
	}
	if n := loads.Load(); n != 2 {
		t.Fatalf("%d loads, want 2", n)
	}
}

// A key removed (or the group purged) on the asking node while a batch of
// it is in flight is handed to GetMany's caller but not kept: the next Get
// fetches it again.
func TestGetManyRemovedDuringBatchIsNotKept(t *testing.T) {
	for _, purge := range []bool{false, true} {
		t.Run(fmt.Sprint("purge=", purge), func(t *testing.T) {
			nodes := newMemCluster(t, batchDB())
			nodes[1].stop()
			done := make(chan []string, 1)
			go func() { done <- getMany(t, nodes[0].group, []string{"b1"}) }()
			testkit.WaitFor(t, "the batch", func() bool { return nodes[1].batches.Load() == 1 })
			if purge {
				nodes[2].down.Store(true) // node0 purges itself; the peers need not confirm here
				_ = nodes[0].group.Purge(t.Context())
			} else {
				if err := serveWrite(t.Context(), nodes[0].reg, nodes[0].group, cache.PeerRequest{Op: cache.OpRemove, Keys: []string{"b1"}}); err != nil {
					t.Fatal(err)
				}
			}
			nodes[1].resume()
			checkMany(t, <-done, []string{"b1"})
			if s := nodes[0].group.Stats(); s.Hot.Items != 0 {
				t.Fatalf("node0 kept %d hot copies fetched before the change", s.Hot.Items)
			}
		})
	}
}
