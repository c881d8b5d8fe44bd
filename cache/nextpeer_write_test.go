package cache_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/internal/history"
)

// A write is not undone by a fetch from a failed owner's next node: the
// other nodes are told together, after the owner, so a node told before
// the next node may fetch the replaced value from it meanwhile, and a Get
// that comes after the write returned must not join that fetch. Nodes x,
// y and o; o owns the key and writes it; x has ejected o and asks the
// key's next node, y; the write reaches x, then y.
func TestAWriteIsNotUndoneByAFetchFromTheNextNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys := historyKeys(64)
		src := history.NewSource(keys)
		nodes, peer := newGatedCluster(t, src, cache.PeerPolicy{NoHedge: true, EjectAfter: 1, EjectFor: time.Hour}, "x", "y", "o")
		key := ""
		for _, k := range keys {
			next, _, _ := nodes["x"].peers.PickFallback(k, func(p cache.Peer) bool { return p.Addr() == "o" })
			if nodes["x"].peers.Owner(k) == "o" && next != nil && next.Addr() == "y" {
				key = k
				break
			}
		}
		if key == "" {
			t.Fatal("no key that o owns with y next")
		}
		ctx := context.Background()
		x, o := nodes["x"].group.Load(), nodes["o"].group.Load()
		peer["x"]["o"].down.Store(true) // x ejects o, and y loads the key for it
		if v, err := x.Get(ctx, key); err != nil || v.String() != history.Initial(key) {
			t.Fatalf("Get with o down = %q, %v; want the source's value", v, err)
		}
		if s := x.Stats(); s.NextPeer == 0 {
			t.Fatal("x did not ask the next node")
		}

		src.Put(key, "new")
		peer["o"]["y"].remove.arm()
		removed := make(chan error, 1)
		go func() { removed <- o.Remove(ctx, key) }()
		synctest.Wait() // o and x have dropped the key; y's Remove is held

		peer["x"]["y"].fetch.arm()
		go func() { _, _ = x.Get(ctx, key) }() // began before the Remove returned: it may read anything
		synctest.Wait()

		peer["o"]["y"].remove.open()
		if err := <-removed; err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			v, err := x.Get(ctx, key)
			if err != nil {
				t.Error(err)
			}
			got <- v.String()
		}()
		synctest.Wait()
		peer["x"]["y"].fetch.open()
		if v := <-got; v != "new" {
			t.Errorf("a Get after the Remove returned %q; want %q (the source's: the Remove dropped the old one)", v, "new")
		}
		time.Sleep(time.Minute) // the groups' workers end when idle
	})
}
