package cache_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
)

// A GetMany that finds its keys' owner ejected starts the readmission
// probe, as Get does: a peer that answers again is readmitted within about
// EjectFor, not at the end of an ejection that doubled while it was down.
// It failed before: a cluster read only through GetMany kept the peer out
// for the whole doubled ejection.
func TestEjectedPeerReadmittedWhenGetManyAsks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHoClusterBatch(t, cache.PeerPolicy{EjectAfter: 1, EjectFor: time.Second}, "a", "b")
		n := 0
		key := func() string { // a key of b's that a has not asked for yet
			for {
				n++
				if k := fmt.Sprintf("k%d", n); c.node("a").peers.Owner(k) == "b" {
					return k
				}
			}
		}
		a, b := c.node("a"), c.node("b")
		getMany := func() {
			k := key()
			a.g.GetMany(context.Background(), []string{k}, func(_ int, v cache.ByteView, err error) {
				if err != nil || v.String() != "v:"+k {
					t.Errorf("GetMany(%s) = %q, %v", k, v, err)
				}
			})
		}
		ejected := func() bool {
			for _, p := range a.g.Stats().Peers {
				if p.Addr == "b" {
					return p.Ejected
				}
			}
			return false
		}
		b.down.Store(true)
		for range 120 { // 12 s down: ejections of 1, 2, 4 and 8 s in a row
			getMany()
			time.Sleep(100 * time.Millisecond)
		}
		if !ejected() {
			t.Fatal("b is not ejected after 12 s down")
		}
		b.down.Store(false)
		back := time.Now()
		for ejected() && time.Since(back) < 30*time.Second {
			getMany()
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
		}
		if d := time.Since(back); d > 1500*time.Millisecond {
			t.Errorf("b was readmitted %v after it answered again; want within EjectFor (1 s) and a GetMany", d)
		}
		time.Sleep(time.Second) // the load workers end when idle
	})
}
