//go:build !js

package nethttp_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
)

// Kill one node while 16 clients read from the other two: no client sees an
// error (the survivors load the dead node's keys themselves), and the
// source is hit at most once per key per surviving node.
func TestKillNodeWhileReading(t *testing.T) {
	nodes, src, _ := startCluster(t, 3, nethttp.PoolOptions{})
	survivors, victim := nodes[:2], nodes[2]

	// before: keys read from the start; after: keys read only once the
	// victim is dead, among them keys the victim owns, so that the
	// fallback path is certainly taken.
	var before, after []string
	victimAfter := 0
	for i := 0; len(before) < 40 || victimAfter < 8; i++ {
		k := fmt.Sprintf("key-%d", i)
		switch {
		case len(before) < 40:
			before = append(before, k)
		case nodes[0].Owner(k) == victim:
			after = append(after, k)
			victimAfter++
		}
	}
	all := append(append([]string(nil), before...), after...)

	// Each client reads before until the kill (at most maxBefore reads),
	// then perClient reads of all. The victim is killed once the clients
	// have read clients*20 between them: while they read, unless one has
	// run out of its maxBefore by then (a slow scheduler, -race), and that
	// one waits for the kill. No client reads a key of after before the
	// kill: the survivors cannot have fetched them from the victim alive,
	// so each of them is loaded elsewhere.
	const clients, perClient, maxBefore = 16, 200, 20000
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var (
		killed   = make(chan struct{})
		warm     = make(chan struct{}) // closed at the clients*20th read
		done     atomic.Int64
		errCount atomic.Int64
		wg       sync.WaitGroup
		firstErr atomic.Value
	)
	read := func(r *rand.Rand, keys []string) {
		k := keys[r.IntN(len(keys))]
		n := survivors[r.IntN(len(survivors))]
		v, err := n.Group.Get(ctx, k)
		if err == nil && v.String() != "v:"+k {
			err = fmt.Errorf("wrong value %q", v.String())
		}
		if err != nil {
			errCount.Add(1)
			firstErr.CompareAndSwap(nil, fmt.Errorf("%s Get(%q): %w", n.Addr, k, err))
		}
		if done.Add(1) == clients*20 {
			close(warm)
		}
	}
	isKilled := func() bool {
		select {
		case <-killed:
			return true
		default:
			return false
		}
	}
	for c := range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(c), 1))
			for i := 0; i < maxBefore && !isKilled() && ctx.Err() == nil; i++ {
				read(r, before)
			}
			select {
			case <-killed:
			case <-ctx.Done():
				return
			}
			for i := 0; i < perClient && ctx.Err() == nil; i++ {
				read(r, all)
			}
		})
	}
	select {
	case <-warm:
	case <-ctx.Done():
		wg.Wait()
		t.Fatalf("readers did not start: %v", ctx.Err())
	}
	victim.SetFault(nethttptest.Fault{Down: true})
	close(killed)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("readers did not finish: %v", ctx.Err())
	}
	if n := errCount.Load(); n != 0 {
		t.Fatalf("%d client errors; first: %v", n, firstErr.Load())
	}
	fallbacks := int64(0)
	var stats []cache.Stats
	for i, n := range survivors {
		for _, k := range all {
			if c := src.count(i, k); c > 1 {
				t.Errorf("%s loaded %q %d times; want at most 1", n.Addr, k, c)
			}
		}
		s := n.Group.Stats()
		stats = append(stats, s)
		fallbacks += s.FallbackLoads + s.EjectedLoads + s.HedgeWins + s.PeerBusy + s.NextPeer // every way of loading the dead owner's keys elsewhere: here, or at the next node
	}
	if fallbacks == 0 {
		t.Fatalf("no fallback load: the dead node's keys were never read after the kill; survivors' stats %+v", stats)
	}
}

// Nodes whose peer lists disagree must not pass a request on: every
// request takes at most one hop.
func TestDisagreeingPeersOneHop(t *testing.T) {
	nodes, _, rt := startCluster(t, 3, nethttp.PoolOptions{})
	a, b, c := nodes[0], nodes[1], nodes[2]
	for _, ring := range [][]*nethttptest.Node{{a, b}, {b, c}, {c, a}} {
		if err := ring[0].Pool.Set(ring[0].Addr, ring[1].Addr); err != nil {
			t.Fatal(err)
		}
	}

	ctx := context.Background()
	wouldLoop := 0
	for i, origin := range nodes {
		for j := range 50 {
			k := fmt.Sprintf("key-%d-%d", i, j)
			if next := origin.Owner(k); next != origin {
				if next.Owner(k) != next {
					wouldLoop++ // the receiving node thinks a third node owns k
				}
			}
			v, err := origin.Group.Get(ctx, k)
			if err != nil || v.String() != "v:"+k {
				t.Fatalf("%s Get(%q) = %q, %v", origin.Addr, k, v.String(), err)
			}
			var hops int64
			for _, n := range nodes {
				hops += rt.toFor(n.Addr, k)
			}
			if hops > 1 {
				t.Fatalf("Get(%q) from %s took %d hops", k, origin.Addr, hops)
			}
		}
	}
	if wouldLoop == 0 {
		t.Fatal("no key was owned differently by the two rings; the test proves nothing")
	}
	t.Logf("%d requests reached a node that would have forwarded them", wouldLoop)
}
