package cache_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// In a group with no TTL of its own, an entry that Set gave a lifetime is
// evicted first once it has expired, as in a group with a TTL: the fresh
// entries stay, and nothing is loaded again.
func TestExpiredSetEntryIsEvictedFirstInATTLlessGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var loads atomic.Int64
		value := make([]byte, 1000)
		src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
			loads.Add(1)
			return value, nil
		})
		// Room for three entries of about 1 KB, not four.
		g, err := cache.NewRegistry().NewGroup("g", 3500, src, &cache.GroupOptions{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer settleBubble()
		ctx := t.Context()
		if err := g.Set(ctx, "set", value, time.Second); err != nil {
			t.Fatal(err)
		}
		for range 3 { // used more than the others, so that the policy alone would keep it
			if _, err := g.Get(ctx, "set"); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range []string{"k1", "k2"} {
			if _, err := g.Get(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * time.Second) // "set" has expired
		if _, err := g.Get(ctx, "k3"); err != nil {
			t.Fatal(err)
		}
		before := loads.Load()
		for _, k := range []string{"k1", "k2", "k3"} {
			if _, err := g.Get(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		if n := loads.Load() - before; n != 0 {
			t.Fatalf("%d of the fresh keys were loaded again: an expired entry set with a lifetime was not the first evicted", n)
		}
	})
}
