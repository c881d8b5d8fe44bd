package cache_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A batch to an owner that hangs is hedged as a Get is: after the hedge
// delay every key loads locally, and GetMany returns then, not when the
// fetch gives up (SlowAfter), with every value right.
func TestGetManyHungOwnerIsHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nodes := newMemClusterWith(t, batchDB(), cache.GroupOptions{PeerPolicy: cache.PeerPolicy{HedgeMin: 10 * time.Millisecond, HedgeMax: 50 * time.Millisecond}})
		nodes[1].stop()
		keys := []string{"b1", "b2", "b-missing", "c1"}
		start := time.Now()
		checkMany(t, getMany(t, nodes[0].group, keys), keys)
		if d := time.Since(start); d >= 2*time.Second {
			t.Fatalf("GetMany took %v (bubble time): it waited for the hung owner", d)
		}
		if s := nodes[0].group.Stats(); s.Hedges != 3 {
			t.Fatalf("Hedges = %d, want 3 (node1's keys)", s.Hedges)
		}
		if n := nodes[0].loads.Load(); n != 3 {
			t.Fatalf("node0 loaded %d keys, want node1's 3", n)
		}
		nodes[1].resume()
		settleBubble()
	})
}

// A batch of cold keys behind a live owner with a slow source is not
// hedged: the owner says it is loading, and each key is loaded once in the
// whole cluster.
func TestGetManySlowSourceLoadsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := map[string]string{}
		var keys []string
		for i := range 10 {
			k := fmt.Sprint("b-slow", i)
			db[k] = "v"
			keys = append(keys, k)
		}
		nodes := newSlowCluster(t, db, 300*time.Millisecond, cache.PeerPolicy{})
		nodes[0].group.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
			if err != nil || v.String() != "v" {
				t.Errorf("%s: %q, %v", keys[i], v, err)
			}
		})
		if got := totalLoads(nodes); got != 10 {
			t.Fatalf("10 cold keys loaded %d times in the cluster; want 10", got)
		}
		if s := nodes[0].group.Stats(); s.Hedges != 0 {
			t.Fatalf("%d hedges of a live owner loading from a slow source", s.Hedges)
		}
		settleBubble()
	})
}

// A peer that did not confirm a RemoveMany is named, and told again in
// the background once it is back: its old copies go.
func TestRemoveManyRetriesTheNamedPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := batchDB()
		nodes := newMemCluster(t, db)
		keys := []string{"b1", "c1"}
		for _, n := range nodes {
			checkMany(t, getMany(t, n.group, keys), keys)
		}
		for _, k := range keys {
			db.Store(k, "new:"+k)
		}
		nodes[2].down.Store(true)
		var ue *cache.UpdateError
		if err := nodes[0].group.RemoveMany(t.Context(), keys); !errors.As(err, &ue) || len(ue.Failed) != 1 || ue.Failed["node2"] == nil {
			t.Fatalf("RemoveMany with node2 down = %v; want node2 named", err)
		}
		nodes[2].down.Store(false)
		time.Sleep(5 * time.Second) // the retries' backoff, in the bubble's time
		synctest.Wait()
		for _, k := range keys {
			if v, err := nodes[2].group.Get(t.Context(), k); err != nil || v.String() != "new:"+k {
				t.Fatalf("node2: Get(%s) = %q, %v after the retries; want the new value", k, v, err)
			}
		}
		settleBubble()
	})
}

// A batch is hedged after the time batches take, not after the time single
// fetches take: an owner that holds every key, answers single Gets at once
// and batches in 15-20 ms, is never hedged, so no key it holds is loaded
// at the asking node. (With the single fetches' delay, 10 ms, every batch
// was hedged and each of its keys loaded twice.)
func TestGetManyHedgeDelayIsBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &sync.Map{}
		for i := range 48 {
			db.Store(fmt.Sprint("b", i), fmt.Sprint("v:b", i))
		}
		nodes := newMemClusterWith(t, db, cache.GroupOptions{})
		for i := range 48 { // node1 owns the b keys and holds them all
			if _, err := nodes[1].group.Get(t.Context(), fmt.Sprint("b", i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 16 { // node0 learns single fetches: at once, so its delay is HedgeMin
			if _, err := nodes[0].group.Get(t.Context(), fmt.Sprint("b", i)); err != nil {
				t.Fatal(err)
			}
		}
		nodes[1].batchTime = func(n int64) time.Duration {
			if n < 8 {
				return 20 * time.Millisecond
			}
			return 15 * time.Millisecond
		}
		for b := range 16 { // 16 batches of two fresh keys and a missing one
			keys := []string{fmt.Sprint("b", 16+2*b), fmt.Sprint("b", 17+2*b), "b-missing"}
			got := getMany(t, nodes[0].group, keys)
			if got[0] != "v:"+keys[0] || got[1] != "v:"+keys[1] || !strings.Contains(got[2], "not found") {
				t.Fatalf("batch %d: %q", b, got)
			}
		}
		if n, s := nodes[0].loads.Load(), nodes[0].group.Stats(); n != 0 || s.Hedges != 0 {
			t.Errorf("node0 loaded %d keys its owner holds (%d hedges); want 0", n, s.Hedges)
		}
		settleBubble()
	})
}

// A hung owner that cannot batch (an older node) is asked key by key, and
// each of those fetches is hedged as a Get's is: GetMany answers after
// about the hedge delay, not when the caller's time (here 10 s, standing
// for the transport's timeout) runs out.
func TestGetManyHungOwnerAskedKeyByKeyIsHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nodes := newMemClusterWith(t, batchDB(), cache.GroupOptions{PeerPolicy: cache.PeerPolicy{HedgeMin: 10 * time.Millisecond, HedgeMax: 50 * time.Millisecond}})
		nodes[1].noBatch.Store(true)
		nodes[1].stop()
		keys := []string{"b1", "b2", "b-missing", "c1"}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		var got []string
		nodes[0].group.GetMany(ctx, keys, func(i int, v cache.ByteView, err error) {
			switch {
			case errors.Is(err, getter.ErrNotFound):
				got = append(got, "not found")
			case err != nil:
				got = append(got, "err: "+err.Error())
			default:
				got = append(got, v.String())
			}
		})
		d := time.Since(start)
		checkMany(t, got, keys)
		if d >= 2*time.Second {
			t.Fatalf("GetMany took %v (bubble time): it waited for the hung owner asked key by key", d)
		}
		nodes[1].resume()
		settleBubble()
	})
}

// omitPeer is a memPeer whose batches leave out the key at index omit.
type omitPeer struct {
	memPeer
	omit int
}

func (p omitPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if len(req.Keys) == 1 {
		return p.memPeer.Do(ctx, req, reply)
	}
	return p.memPeer.Do(ctx, req, omitReply{reply, p.omit})
}

// omitReply passes on every answer but the one for the key at index omit.
type omitReply struct {
	cache.PeerReply
	omit int
}

func (r omitReply) Answer(i int, v cache.ByteView, ttl time.Duration, err error) {
	if i != r.omit {
		r.PeerReply.Answer(i, v, ttl, err)
	}
}

// omitPicker is memPicker with node1's batches leaving out a key.
type omitPicker struct{ memPicker }

func (m omitPicker) PickPeer(key string) (cache.Peer, bool) {
	p, ok := m.memPicker.PickPeer(key)
	if mp := p.(memPeer); mp.n == m.nodes[1] {
		return omitPeer{mp, 2}, ok
	}
	return p, ok
}

// A batch hedge wins only the keys its local loads decide: when the owner
// answers two keys of three (after the hedge has started) and leaves the
// third out, the hedge answers the third alone, and the local loads of the
// two that end later won nothing. HedgeWins counts keys a hedge answered
// first, as for Get.
func TestGetManyHedgeWinsCountsOnlyKeysTheHedgeDecided(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := map[string]string{"b1": "v", "b2": "v", "b3": "v"}
		keys := []string{"b1", "b2", "b3"}
		nodes := newSlowCluster(t, db, 300*time.Millisecond, cache.PeerPolicy{})
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, getter.Func(func(ctx context.Context, key string) ([]byte, error) {
			nodes[0].loads.Add(1)
			select {
			case <-time.After(300 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return []byte(db[key]), nil
		}), &cache.GroupOptions{Peers: omitPicker{memPicker{0, nodes}}, Logger: quiet,
			PeerPolicy: cache.PeerPolicy{HedgeMin: 10 * time.Millisecond, HedgeMax: 10 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		nodes[1].group.GetMany(t.Context(), keys, func(int, cache.ByteView, error) {}) // the owner holds them
		nodes[1].batchTime = func(int64) time.Duration { return 50 * time.Millisecond }
		g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
			if err != nil || v.String() != "v" {
				t.Errorf("%s: %q, %v", keys[i], v, err)
			}
		})
		settleBubble()
		if s := g.Stats(); s.Hedges != 3 || s.HedgeWins != 1 {
			t.Fatalf("Hedges = %d, HedgeWins = %d; want 3 hedges (the owner took 50 ms, the hedge delay is 10 ms) and 1 win (the key the owner left out)", s.Hedges, s.HedgeWins)
		}
	})
}
