package cache_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/peertest"
)

// This file is where a key another node owns goes when this node loads it
// itself: as a copy, in hot, while that node is alive (busy: past
// MaxInFlight); where the fallback keeps it once the owner failed (a
// batch's hedge that stood in for the fallback).

// newKeepGroup is a group in a synctest bubble with peers, whose source
// answers "local:"+key ("missing…" keys: not found) after loadTime and
// counts its loads. "Not found" is cached for a minute.
func newKeepGroup(t *testing.T, peers cache.PeerPicker, policy cache.PeerPolicy, loadTime time.Duration) (*cache.Group, *atomic.Int64) {
	t.Helper()
	return newLoadingGroup(t, peers, policy, loadTime, false)
}

// newLoadingGroup is newKeepGroup's and newHedgeGroup's group: with deaf,
// its source ignores its context and answers after loadTime all the same.
func newLoadingGroup(t *testing.T, peers cache.PeerPicker, policy cache.PeerPolicy, loadTime time.Duration, deaf bool) (*cache.Group, *atomic.Int64) {
	t.Helper()
	t.Cleanup(settleBubble)
	var loads atomic.Int64
	src := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		loads.Add(1)
		select {
		case <-time.After(loadTime):
		case <-ctx.Done():
			if !deaf {
				return nil, ctx.Err()
			}
			<-time.After(loadTime)
		}
		if strings.HasPrefix(key, "missing") {
			return nil, getter.ErrNotFound
		}
		return []byte("local:" + key), nil
	})
	g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: peers, Logger: quiet,
		NotFoundTTL: time.Minute, PeerPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return g, &loads
}

// heldOwner answers "remote:"+key, except "held", which it answers only
// when release is closed: a fetch of it keeps one request in flight.
func heldOwner(release <-chan struct{}) *peerFunc {
	return &peerFunc{func(ctx context.Context, key string) ([]byte, error) {
		if key == "held" {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return []byte("remote:" + key), nil
	}}
}

// checkKey checks that v, err is key's local load (a value, or for a
// "missing…" key "not found").
func checkKey(t *testing.T, when, key string, v cache.ByteView, err error) {
	t.Helper()
	if !strings.HasPrefix(key, "missing") && (err != nil || v.String() != "local:"+key) {
		t.Fatalf("%s: %s = %q, %v; want %q", when, key, v, err, "local:"+key)
	}
	if strings.HasPrefix(key, "missing") && !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("%s: %s = %q, %v; want not found", when, key, v, err)
	}
}

// A key whose owner is busy (MaxInFlight requests in flight) is loaded
// here, and kept as a copy in hot, not in main: the owner is alive and
// holds it. The next Get is a hit, with no second load. For Get and
// GetMany, with and without a router (with one, the batch path credited
// it as taken over).
func TestBusyOwnersKeyIsACopy(t *testing.T) {
	for _, many := range []bool{false, true} {
		for _, routed := range []bool{false, true} {
			for _, key := range []string{"k", "missing-k"} {
				t.Run(fmt.Sprintf("GetMany=%v/router=%v/%s", many, routed, key), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						release := make(chan struct{})
						defer close(release) // the held fetch ends, also after a failure
						owner := heldOwner(release)
						var peers cache.PeerPicker = allRemote{owner}
						if routed {
							peers = routerTo{owner: owner}
						}
						g, loads := newKeepGroup(t, peers, cache.PeerPolicy{MaxInFlight: 1, NoHedge: true}, 0)
						go func() { _, _ = g.Get(context.WithoutCancel(t.Context()), "held") }()
						synctest.Wait() // the fetch of "held" is in flight: the owner is busy
						if many {
							g.GetMany(t.Context(), []string{key}, func(_ int, v cache.ByteView, err error) {
								checkKey(t, "busy", key, v, err)
							})
						} else {
							v, err := g.Get(t.Context(), key)
							checkKey(t, "busy", key, v, err)
						}
						s := g.Stats()
						if s.PeerBusy != 1 || s.Main.Items != 0 || s.Hot.Items != 1 {
							t.Fatalf("PeerBusy %d, Main.Items %d, Hot.Items %d; want 1, 0 (the owner is alive), 1",
								s.PeerBusy, s.Main.Items, s.Hot.Items)
						}
						v, err := g.Get(t.Context(), key)
						checkKey(t, "again", key, v, err)
						if n, h := loads.Load(), g.Stats().Hits; n != 1 || h != 1 {
							t.Fatalf("%d loads, %d hits; want 1 and 1: the copy is held", n, h)
						}
					})
				})
			}
		}
	}
}

// hungBatchPeer fails every read (the tests' GetMany sends it their
// batches, of one key or more): after failAfter, or (0) when its caller
// leaves, as an owner that hangs does. It carries no write.
type hungBatchPeer struct {
	*peerFunc
	failAfter time.Duration
}

func (p hungBatchPeer) Do(ctx context.Context, req cache.PeerRequest, _ cache.PeerReply) error {
	if req.Op != cache.OpGet && req.Op != cache.OpPeek {
		return peertest.ErrReadOnly
	}
	if p.failAfter > 0 {
		select {
		case <-time.After(p.failAfter):
			return errors.New("owner failed")
		case <-ctx.Done():
		}
	}
	<-ctx.Done()
	return ctx.Err()
}

// The batch side of keepFallback: a GetMany whose batch is hedged and then
// fails (before the hedge's loads end, or after they answered, hanging
// past SlowAfter) keeps the hedge's copies where the fallback keeps a
// failed owner's keys: in main if this node is their next node, in hot if
// another node is. Get waits for its fetch to know; GetMany's batch ends in
// the background.
func TestGetManyHedgeOfAFailedOwnerIsKeptAsTheFallbacks(t *testing.T) {
	for _, failAfter := range []time.Duration{200 * time.Millisecond, 0} {
		for _, thisNext := range []bool{true, false} {
			name := fmt.Sprintf("fails before the hedge ends=%v/this node next=%v", failAfter > 0, thisNext)
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					r := routerTo{owner: hungBatchPeer{peerFunc: heldOwner(nil), failAfter: failAfter}}
					if !thisNext {
						r.next = &fakePeer{}
					}
					loadTime := time.Duration(0)
					if failAfter > 0 {
						loadTime = 500 * time.Millisecond // the hedge (from 100 ms) ends after the batch failed
					}
					g, loads := newKeepGroup(t, r, cache.PeerPolicy{}, loadTime)
					keys := []string{"k1", "k2", "missing-k"}
					g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
						checkKey(t, "GetMany", keys[i], v, err)
					})
					time.Sleep(5 * time.Second) // past SlowAfter: the batch failed
					synctest.Wait()
					s := g.Stats()
					wantMain := int64(0)
					if thisNext {
						wantMain = 3
					}
					if s.Hedges != 3 || s.Main.Items != wantMain || s.Hot.Items != 3-wantMain {
						t.Fatalf("Hedges %d, Main.Items %d, Hot.Items %d; want 3, %d, %d",
							s.Hedges, s.Main.Items, s.Hot.Items, wantMain, 3-wantMain)
					}
					for _, k := range keys {
						v, err := g.Get(t.Context(), k)
						checkKey(t, "again", k, v, err)
					}
					if n := loads.Load(); n != 3 {
						t.Fatalf("%d loads; want 3, once per key", n)
					}
				})
			})
		}
	}
}

// A key of a GetMany whose caller leaves while its batch is in flight, and
// which a Get joined, is loaded here for that Get in the background: as a
// copy, in hot (the batch was cancelled; the owner did not fail), not in
// main, and the next Get is a hit.
func TestGetManyAbandonedKeyIsACopy(t *testing.T) {
	for _, key := range []string{"k", "missing-k"} {
		t.Run(key, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := routerTo{owner: hungBatchPeer{peerFunc: heldOwner(nil)}}
				g, loads := newKeepGroup(t, r, cache.PeerPolicy{NoHedge: true}, 0)
				ctx, cancel := context.WithCancel(t.Context())
				go g.GetMany(ctx, []string{key}, func(int, cache.ByteView, error) {})
				synctest.Wait() // the batch is in flight
				type result struct {
					v   cache.ByteView
					err error
				}
				got := make(chan result, 1)
				go func() {
					v, err := g.Get(t.Context(), key) // joins the batch's claim
					got <- result{v, err}
				}()
				synctest.Wait()
				cancel()
				res := <-got
				checkKey(t, "joined", key, res.v, res.err)
				synctest.Wait()
				s := g.Stats()
				if s.Main.Items != 0 || s.Hot.Items != 1 {
					t.Fatalf("Main.Items %d, Hot.Items %d; want 0 (the owner did not fail), 1", s.Main.Items, s.Hot.Items)
				}
				v, err := g.Get(t.Context(), key)
				checkKey(t, "again", key, v, err)
				if n := loads.Load(); n != 1 {
					t.Fatalf("%d loads; want 1: the copy is held", n)
				}
			})
		})
	}
}
