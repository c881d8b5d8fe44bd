package cache_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
)

// A GetMany whose caller leaves while its batch is hedged (the owner hangs,
// the keys load locally) does not hand its cancellation to a Get that
// joined one of its keys: the Get gets the value, as it would from a Get
// whose caller left.
func TestGetManyCallerLeavingDuringHedgeKeepsJoinedGets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nodes := newSlowCluster(t, map[string]string{"b-slow0": "v"}, 300*time.Millisecond,
			cache.PeerPolicy{HedgeMin: 10 * time.Millisecond, HedgeMax: 50 * time.Millisecond})
		nodes[1].stop()
		ctx, cancel := context.WithCancel(t.Context())
		manyDone := make(chan struct{})
		go func() {
			defer close(manyDone)
			nodes[0].group.GetMany(ctx, []string{"b-slow0"}, func(int, cache.ByteView, error) {})
		}()
		time.Sleep(time.Millisecond)
		type result struct {
			v   string
			err error
		}
		got := make(chan result, 1)
		go func() {
			v, err := nodes[0].group.Get(context.Background(), "b-slow0")
			got <- result{v.String(), err}
		}()
		time.Sleep(100 * time.Millisecond) // the hedge's local load is running
		cancel()
		<-manyDone
		if r := <-got; r.err != nil || r.v != "v" {
			t.Errorf("the joined Get = %q, %v; want the value, not the GetMany caller's cancellation", r.v, r.err)
		}
		nodes[1].resume()
		settleBubble()
	})
}
