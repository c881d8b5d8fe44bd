package cache_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
)

// A Purge is not undone by a previous owner: for PeerPolicy.SlowAfter after it, a
// node that owns a key since a ring change does not take the key from its
// previous owner's memory (which the purge may not have reached: here the
// peers take no purge at all), it loads it. Before, a previous owner's
// pre-purge value was taken and kept.
func TestPurgeIsNotUndoneByAPreviousOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHoCluster(t, cache.PeerPolicy{}, "a", "b", "c")
		keys := hoKeys(200)
		for _, k := range keys {
			c.get(t, "a", k)
		}
		d := c.add(t, "d")
		for _, a := range []string{"a", "b", "c", "d"} {
			c.set(t, a, "a", "b", "c", "d")
		}
		_ = d.g.Purge(context.Background()) // the read-only peers refuse it: an *UpdateError
		moved := 0
		for _, k := range keys {
			if d.peers.Owner(k) != "d" {
				continue
			}
			moved++
			c.get(t, "d", k)
			if n := c.loadsOf(k); n != 2 {
				t.Errorf("%s: %d loads; want 2 (loaded again after the purge, not taken from its previous owner)", k, n)
			}
		}
		if moved == 0 {
			t.Fatal("no key moved to d")
		}
		if s := d.g.Stats(); s.Handoffs != 0 {
			t.Errorf("d took %d keys from a previous owner within SlowAfter of its purge; want 0", s.Handoffs)
		}
		time.Sleep(time.Second) // the load workers end when idle
	})
}
