package cache_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
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

// A GetMany whose caller leaves while its batch is hedged hands a key that
// a Get joined to the hedge's local load in flight: the source is called
// once for the key, not once by the hedge and again for the Get; for a key
// the source has, and for one it does not.
func TestGetManyCallerLeavingDuringHedgeLoadsOnce(t *testing.T) {
	for _, key := range []string{"b-slow0", "b-missing"} {
		t.Run(key, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				nodes := newSlowCluster(t, map[string]string{"b-slow0": "v"}, 300*time.Millisecond,
					cache.PeerPolicy{HedgeMin: 10 * time.Millisecond, HedgeMax: 50 * time.Millisecond})
				nodes[1].stop()
				ctx, cancel := context.WithCancel(t.Context())
				manyDone := make(chan struct{})
				go func() {
					defer close(manyDone)
					nodes[0].group.GetMany(ctx, []string{key}, func(int, cache.ByteView, error) {})
				}()
				time.Sleep(time.Millisecond)
				type result struct {
					v   string
					err error
				}
				got := make(chan result, 1)
				go func() {
					v, err := nodes[0].group.Get(context.Background(), key)
					got <- result{v.String(), err}
				}()
				time.Sleep(100 * time.Millisecond) // the hedge's local load is running
				cancel()
				<-manyDone
				r := <-got
				switch {
				case key == "b-slow0" && (r.err != nil || r.v != "v"):
					t.Errorf("the joined Get = %q, %v; want v", r.v, r.err)
				case key == "b-missing" && !errors.Is(r.err, getter.ErrNotFound):
					t.Errorf("the joined Get = %q, %v; want not found", r.v, r.err)
				}
				if n := nodes[0].loads.Load(); n != 1 {
					t.Errorf("node0 called its source %d times for one key, want 1 (the hedge's load, handed to the Get)", n)
				}
				nodes[1].resume()
				settleBubble()
			})
		})
	}
}
