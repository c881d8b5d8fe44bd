package cache_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// failedPeers returns the addresses an *UpdateError names, sorted, or
// fails the test if err is none.
func failedPeers(t *testing.T, err error) []string {
	t.Helper()
	var ue *cache.UpdateError
	if !errors.As(err, &ue) || !errors.Is(err, cache.ErrPartialUpdate) {
		t.Fatalf("err = %v; want an *UpdateError", err)
	}
	return slices.Sorted(maps.Keys(ue.Failed))
}

// servesOld reports whether n answers key with the old answer: the value
// "old", or (for a key that did not exist) a cached "not found". A Get
// that waits for a hung owner and gives up serves nothing old.
func servesOld(t *testing.T, n *memNode, key string, present bool) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	v, err := n.group.Get(ctx, key)
	if present {
		return err == nil && v.String() == "old"
	}
	return errors.Is(err, getter.ErrNotFound)
}

// idle waits, in a synctest bubble, for the group's idle goroutines (the
// load workers) to end, so that the bubble can.
func idle() { time.Sleep(time.Second) }

// A Remove or a Set with a 2 s deadline, from node0, of a key whose owner
// (node1) hangs: it returns by its deadline; once it has, no healthy node
// serves the old answer, and the error names exactly the hung owner. Once
// the owner resumes, the background retry brings the change to it too,
// and every node answers the new value. For a key that exists (cached
// everywhere) and one that did not (its "not found" cached everywhere).
func TestWriteWithHungOwner(t *testing.T) {
	for _, tc := range []struct {
		name         string
		set, present bool
	}{
		{"Remove/present", false, true}, {"Remove/missing", false, false},
		{"Set/present", true, true}, {"Set/missing", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				defer idle()
				var db sync.Map
				const key = "b-key" // node1's
				if tc.present {
					db.Store(key, "old")
				}
				nodes := newMemClusterWith(t, &db, cache.GroupOptions{NotFoundTTL: time.Hour, PeerPolicy: cache.PeerPolicy{NoHedge: true}})
				for _, n := range nodes {
					if !servesOld(t, n, key, tc.present) {
						t.Fatalf("%s does not serve the old answer before the write", n.name)
					}
				}
				db.Store(key, "new")
				nodes[1].stop()
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
				start := time.Now()
				var err error
				if tc.set {
					err = nodes[0].group.Set(ctx, key, []byte("new"), 0)
				} else {
					err = nodes[0].group.Remove(ctx, key)
				}
				took := time.Since(start)
				cancel()
				if took > 2*time.Second {
					t.Errorf("the write took %v; want at most its 2 s deadline", took)
				}
				if got := failedPeers(t, err); !slices.Equal(got, []string{"node1"}) {
					t.Errorf("the error names %v; want exactly the hung owner, node1: %v", got, err)
				}
				for _, n := range []*memNode{nodes[0], nodes[2]} {
					if servesOld(t, n, key, tc.present) {
						t.Errorf("%s, healthy, still serves the old answer after the write returned", n.name)
					}
				}

				nodes[1].resume()
				time.Sleep(time.Minute) // longer than the retries may last
				synctest.Wait()
				for _, n := range nodes {
					if v, err := n.group.Get(t.Context(), key); err != nil || v.String() != "new" {
						t.Errorf("%s after the owner resumed: Get = %q, %v; want %q", n.name, v, err, "new")
					}
				}
			})
		})
	}
}

// A write does not wait for an owner this node has ejected (its Gets
// failed): it asks the others at once, names the owner, and retries it in
// the background, so that the owner has the change once it answers again.
// The caller's context allows 10 s, a transport's timeout.
func TestWriteDoesNotWaitForAnEjectedOwner(t *testing.T) {
	for _, set := range []bool{false, true} {
		t.Run(map[bool]string{false: "Remove", true: "Set"}[set], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				defer idle()
				var db sync.Map
				const key = "b-key" // node1's
				db.Store(key, "old")
				nodes := newMemClusterWith(t, &db, cache.GroupOptions{
					PeerPolicy: cache.PeerPolicy{NoHedge: true, EjectAfter: 1, EjectFor: time.Hour}})
				for _, n := range nodes {
					if !servesOld(t, n, key, true) {
						t.Fatalf("%s does not serve the old value before the write", n.name)
					}
				}
				// node0 ejects node1: a Get of another key node1 owns fails
				// there (and is loaded locally).
				nodes[1].down.Store(true)
				if _, err := nodes[0].group.Get(t.Context(), "b-other"); !errors.Is(err, getter.ErrNotFound) {
					t.Fatalf("Get with the owner down: %v", err)
				}
				if ps := nodes[0].group.Stats().Peers; len(ps) != 1 || !ps[0].Ejected {
					t.Fatalf("node1 is not ejected: %+v", ps)
				}
				nodes[1].down.Store(false)
				nodes[1].stop()
				db.Store(key, "new")
				before := nodes[1].writes.Load()

				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				start := time.Now()
				var err error
				if set {
					err = nodes[0].group.Set(ctx, key, []byte("new"), 0)
				} else {
					err = nodes[0].group.Remove(ctx, key)
				}
				took := time.Since(start)
				cancel()
				if took != 0 {
					t.Errorf("the write took %v; want no wait at all for the ejected owner", took)
				}
				if n := nodes[1].writes.Load() - before; n != 0 {
					t.Errorf("the ejected owner was sent %d writes during the call; want 0", n)
				}
				if got := failedPeers(t, err); !slices.Equal(got, []string{"node1"}) {
					t.Errorf("the error names %v; want exactly the ejected owner, node1: %v", got, err)
				}
				if servesOld(t, nodes[2], key, true) {
					t.Error("node2 still serves the old value")
				}

				nodes[1].resume()
				time.Sleep(time.Minute)
				synctest.Wait()
				if nodes[1].writes.Load() == before {
					t.Fatal("the ejected owner was never retried")
				}
				if v, _, err := serveKey(t.Context(), nodes[1].reg, nodes[1].group, cache.OpGet, key); err != nil || v.String() != "new" {
					t.Errorf("the owner after the retry: %q, %v; want %q", v, err, "new")
				}
			})
		})
	}
}

// A Set the hung owner did not confirm is not sent again over a newer Set
// from another node once the owner is back: the retry only drops the key,
// so every node ends with the newer value (which the caller, as Set
// expects, has also written to the source).
func TestNewerWriteSupersedesRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		defer idle()
		var db sync.Map
		const key = "b-key"
		nodes := newMemClusterWith(t, &db, cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}})
		nodes[1].stop()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		err := nodes[0].group.Set(ctx, key, []byte("v1"), 0)
		cancel()
		if got := failedPeers(t, err); !slices.Equal(got, []string{"node1"}) {
			t.Fatalf("the first Set names %v; want node1", got)
		}
		nodes[1].resume()
		db.Store(key, "v2")
		if err := nodes[2].group.Set(t.Context(), key, []byte("v2"), 0); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, n := range nodes {
			if v, err := n.group.Get(t.Context(), key); err != nil || v.String() != "v2" {
				t.Errorf("%s: Get = %q, %v; want the newer v2", n.name, v, err)
			}
		}
	})
}

// A caller without a deadline is not held for a hung owner past
// PeerPolicy.SlowAfter, and the other nodes are told meanwhile.
func TestWriteWithoutDeadlineIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		defer idle()
		var db sync.Map
		db.Store("b-key", "old")
		nodes := newMemClusterWith(t, &db, cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true, SlowAfter: 3 * time.Second}})
		for _, n := range nodes {
			if !servesOld(t, n, "b-key", true) {
				t.Fatalf("%s does not serve the old value", n.name)
			}
		}
		nodes[1].stop()
		start := time.Now()
		err := nodes[0].group.Remove(context.Background(), "b-key")
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("Remove took %v; want at most SlowAfter, 3 s", took)
		}
		if got := failedPeers(t, err); !slices.Equal(got, []string{"node1"}) {
			t.Errorf("the error names %v; want node1", got)
		}
		if servesOld(t, nodes[2], "b-key", true) {
			t.Error("node2 still serves the old value")
		}
		nodes[1].resume()
		time.Sleep(time.Minute)
		synctest.Wait()
	})
}

// Writes that a hung owner does not answer within SlowAfter count toward
// its ejection, as fetches do: after EjectAfter of them, the next write
// (and Get) does not wait for it.
func TestWritesEjectAHungOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		defer idle()
		var db sync.Map
		nodes := newMemClusterWith(t, &db, cache.GroupOptions{
			PeerPolicy: cache.PeerPolicy{NoHedge: true, EjectAfter: 2, EjectFor: time.Hour, SlowAfter: time.Second}})
		nodes[1].stop()
		ejected := func() bool {
			for _, ps := range nodes[0].group.Stats().Peers {
				if ps.Addr == "node1" {
					return ps.Ejected
				}
			}
			return false
		}
		for i := range 2 {
			if ejected() {
				t.Fatalf("node1 ejected after %d writes; want 2", i)
			}
			if got := failedPeers(t, nodes[0].group.Remove(context.Background(), "b-key")); !slices.Equal(got, []string{"node1"}) {
				t.Fatalf("write %d names %v; want node1", i, got)
			}
		}
		if !ejected() {
			t.Fatal("node1 is not ejected after 2 writes it did not answer")
		}
		before := nodes[1].writes.Load()
		start := time.Now()
		err := nodes[0].group.Remove(context.Background(), "b-key")
		if took := time.Since(start); took != 0 || nodes[1].writes.Load() != before {
			t.Errorf("the write after the ejection took %v and sent node1 %d writes; want no wait, none", took, nodes[1].writes.Load()-before)
		}
		if got := failedPeers(t, err); !slices.Equal(got, []string{"node1"}) {
			t.Errorf("it names %v; want node1", got)
		}
		nodes[1].resume()
		time.Sleep(time.Minute)
		synctest.Wait()
	})
}
