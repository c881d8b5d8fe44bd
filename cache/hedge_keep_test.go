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
)

// This file is where a hedge's value goes: a hedge is for a slow owner,
// not a dead one, so its value is a copy of another node's key, kept in
// the hot cache as the owner's answer would be (never in main); and a
// hedge that the owner's answer beat is cancelled, which is no load error.

// newHedgeGroup is a group in a synctest bubble whose keys p owns, with a
// source that answers "local:"+key ("missing…" keys: not found) after
// loadTime, ignoring its context if deaf; it counts its loads. "Not found"
// is cached for a minute.
func newHedgeGroup(t *testing.T, p cache.Peer, loadTime time.Duration, deaf bool) (*cache.Group, *atomic.Int64) {
	t.Helper()
	return newLoadingGroup(t, allRemote{p}, cache.PeerPolicy{}, loadTime, deaf)
}

// An owner that answers after answer (0: when its caller leaves), with
// "remote:"+key or "not found"; it counts its calls.
func slowOwner(answer time.Duration, calls *atomic.Int64) *peerFunc {
	return &peerFunc{func(ctx context.Context, key string) ([]byte, error) {
		calls.Add(1)
		if answer == 0 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		select {
		case <-time.After(answer):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if strings.HasPrefix(key, "missing") {
			return nil, getter.ErrNotFound
		}
		return []byte("remote:" + key), nil
	}}
}

// A hedge that answers first keeps its value (or its "not found") in the
// hot cache, not in main: the owner is alive and answers later (its late
// answer is dropped), and the next Get is a hit, with no second load and
// no second fetch.
func TestHedgeKeepsACopyInHot(t *testing.T) {
	for _, key := range []string{"k", "missing-k"} {
		t.Run(key, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int64
				g, loads := newHedgeGroup(t, slowOwner(500*time.Millisecond, &calls), 0, false) // the first hedge delay: 100 ms
				want := "local:" + key
				check := func(when string) {
					t.Helper()
					v, err := g.Get(t.Context(), key)
					if key == "k" && (err != nil || v.String() != want) {
						t.Fatalf("%s: Get = %q, %v; want %q", when, v, err, want)
					}
					if key != "k" && !errors.Is(err, getter.ErrNotFound) {
						t.Fatalf("%s: Get = %q, %v; want not found", when, v, err)
					}
				}
				check("hedged")
				time.Sleep(time.Second) // the owner's answer has come, and gone
				synctest.Wait()
				s := g.Stats()
				if s.Hedges != 1 || s.Main.Items != 0 || s.Hot.Items != 1 {
					t.Fatalf("after the hedge won: Hedges %d, Main.Items %d, Hot.Items %d; want 1, 0 (the owner is alive), 1",
						s.Hedges, s.Main.Items, s.Hot.Items)
				}
				check("again")
				if n, c := loads.Load(), calls.Load(); n != 1 || c != 1 {
					t.Fatalf("%d loads and %d fetches; want 1 and 1: the copy is held", n, c)
				}
			})
		})
	}
}

// An owner that answers before the hedge's load ends is what the callers
// get, and what is kept (in hot): the hedge is cancelled, which is not a
// load error (the source did not fail), and a source that returns anyway
// does not put its copy over the owner's, nor in main.
func TestHedgeBeatenByTheOwner(t *testing.T) {
	for _, deaf := range []bool{false, true} {
		name := "source stops when cancelled"
		if deaf {
			name = "source ignores the cancellation"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int64
				g, loads := newHedgeGroup(t, slowOwner(150*time.Millisecond, &calls), 300*time.Millisecond, deaf)
				for _, key := range []string{"k", "missing-k"} {
					v, err := g.Get(t.Context(), key)
					if key == "k" && (err != nil || v.String() != "remote:k") {
						t.Fatalf("Get(%s) = %q, %v; want the owner's answer", key, v, err)
					}
					if key != "k" && !errors.Is(err, getter.ErrNotFound) {
						t.Fatalf("Get(%s) = %q, %v; want not found", key, v, err)
					}
				}
				time.Sleep(time.Second)
				synctest.Wait()
				s := g.Stats()
				if s.Hedges != 2 || s.HedgeWins != 0 || s.LoadErrors != 0 || s.Main.Items != 0 || s.Hot.Items != 2 {
					t.Fatalf("Hedges %d, HedgeWins %d, LoadErrors %d, Main.Items %d, Hot.Items %d; want 2, 0, 0 (a cancelled hedge is no load error), 0, 2",
						s.Hedges, s.HedgeWins, s.LoadErrors, s.Main.Items, s.Hot.Items)
				}
				if v, err := g.Get(t.Context(), "k"); err != nil || v.String() != "remote:k" {
					t.Fatalf("Get(k) again = %q, %v; want the owner's copy", v, err)
				}
				if n, c := loads.Load(), calls.Load(); n != 2 || c != 2 {
					t.Fatalf("%d loads, %d fetches; want 2 and 2", n, c)
				}
			})
		})
	}
}

// A load whose only caller leaves is cancelled: the source did not fail,
// so it is no load error either.
func TestCallerCancelIsNoLoadError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t.Cleanup(settleBubble)
		g2, err := cache.NewRegistry().NewGroup("g", 1<<20, getter.Func(func(ctx context.Context, _ string) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}), &cache.GroupOptions{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		if _, err := g2.Get(ctx, "k"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get = %v; want the caller's deadline", err)
		}
		synctest.Wait()
		if s := g2.Stats(); s.LocalLoads != 1 || s.LoadErrors != 0 {
			t.Fatalf("LocalLoads %d, LoadErrors %d; want 1 and 0", s.LocalLoads, s.LoadErrors)
		}
	})
}

// routerTo owns every key at owner, and names next as the node after it
// (nil: this node is next).
type routerTo struct{ owner, next cache.Peer }

func (r routerTo) PickPeer(string) (cache.Peer, bool) { return r.owner, true }

func (r routerTo) PickFallback(string, func(cache.Peer) bool) (next, previous cache.Peer, changed time.Time) {
	return r.next, nil, time.Time{}
}

// A hedge whose owner then fails (it hangs past SlowAfter) stood in for
// the fallback: its copy is kept where the fallback keeps a failed owner's
// key, in main if this node is the key's next node (it loads it for the
// cluster), in hot if another node is.
func TestHedgeOfAFailedOwnerIsKeptAsTheFallbacks(t *testing.T) {
	for _, thisNext := range []bool{true, false} {
		for _, key := range []string{"k", "missing-k"} {
			t.Run(fmt.Sprintf("this node next=%v/%s", thisNext, key), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					t.Cleanup(settleBubble)
					var calls atomic.Int64
					r := routerTo{owner: slowOwner(0, &calls)}
					if !thisNext {
						r.next = &fakePeer{}
					}
					src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
						if strings.HasPrefix(key, "missing") {
							return nil, getter.ErrNotFound
						}
						return []byte("local:" + key), nil
					})
					g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: r, Logger: quiet,
						NotFoundTTL: time.Minute})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := g.Get(t.Context(), key); (key == "k") != (err == nil) {
						t.Fatalf("Get(%s) = %v", key, err)
					}
					time.Sleep(3 * time.Second) // past SlowAfter: the fetch failed
					synctest.Wait()
					s := g.Stats()
					wantMain := int64(0)
					if thisNext {
						wantMain = 1
					}
					if s.Hedges != 1 || s.Main.Items != wantMain || s.Hot.Items != 1-wantMain {
						t.Fatalf("Hedges %d, Main.Items %d, Hot.Items %d; want 1, %d, %d",
							s.Hedges, s.Main.Items, s.Hot.Items, wantMain, 1-wantMain)
					}
				})
			})
		}
	}
}

// GetMany's hedge keeps its copies in hot too: a batch to a slow owner is
// hedged, every key loads here and answers first, the batch's late answer
// is dropped, and the keys (and the missing one) are held once, in hot, so
// that Gets of them load nothing again.
func TestGetManyHedgeKeepsCopiesInHot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t.Cleanup(settleBubble)
		nodes := newMemClusterWith(t, batchDB(), cache.GroupOptions{NotFoundTTL: time.Minute,
			PeerPolicy: cache.PeerPolicy{HedgeMin: 10 * time.Millisecond, HedgeMax: 50 * time.Millisecond}})
		nodes[1].batchTime = func(int64) time.Duration { return 500 * time.Millisecond } // alive, and slow
		keys := []string{"b1", "b2", "b-missing"}
		checkMany(t, getMany(t, nodes[0].group, keys), keys)
		time.Sleep(time.Second) // the batch's answer has come
		synctest.Wait()
		s := nodes[0].group.Stats()
		if s.Hedges != 3 || s.Main.Items != 0 || s.Hot.Items != 3 {
			t.Fatalf("node0: Hedges %d, Main.Items %d, Hot.Items %d; want 3, 0 (node1 owns them), 3", s.Hedges, s.Main.Items, s.Hot.Items)
		}
		for _, k := range keys {
			_, _ = nodes[0].group.Get(t.Context(), k)
		}
		if n := nodes[0].loads.Load(); n != 3 {
			t.Fatalf("node0 loaded %d times; want 3, once per key", n)
		}
	})
}
