package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/peertest"
	"github.com/geecache/geecache/picker"
)

// A GetMany that finds its keys' owner ejected starts the readmission
// probe, as Get does: a peer that answers again is readmitted within about
// EjectFor, not at the end of an ejection that doubled while it was down:
// a cluster read only through GetMany must not keep the peer out for the
// whole doubled ejection.
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
		ejected := func() bool { return peerEjected(a.g, "b") }
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

// A peer that fails for a moment and is ejected (a node restarted in
// place, its port closed meanwhile) is asked again in the background an
// eighth of EjectFor after its ejection, and readmitted then, not at the
// end of EjectFor: without a background probe at the first ejection, the
// peer would stay out for the whole second (and its keys load elsewhere
// meanwhile).
func TestPeerBackSoonAfterItsEjectionIsReadmittedSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHoCluster(t, cache.PeerPolicy{EjectAfter: 1, EjectFor: time.Second, NoHedge: true}, "a", "b")
		a, b := c.node("a"), c.node("b")
		keys := bKeys(c, "k", 200)
		get := func(i int) {
			k := keys[i%len(keys)]
			if v, err := a.g.Get(context.Background(), k); err != nil || v.String() != "v:"+k {
				t.Fatalf("Get(%s) = %q, %v", k, v, err)
			}
		}
		b.down.Store(true)
		get(0)
		if !peerEjected(a.g, "b") {
			t.Fatal("b is not ejected after a failure (EjectAfter 1)")
		}
		time.Sleep(50 * time.Millisecond)
		b.down.Store(false) // back
		back := time.Now()
		for i := 1; peerEjected(a.g, "b") && time.Since(back) < 2*time.Second; i++ {
			get(i)
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
		}
		if d := time.Since(back); d > 200*time.Millisecond {
			t.Errorf("b was readmitted %v after it answered again; want within EjectFor/8 (125 ms) of its ejection", d)
		}
		served := b.calls.Load()
		get(len(keys) - 1)
		if b.calls.Load() != served+1 {
			t.Errorf("a Get of b's key after the readmission did not reach b")
		}
		time.Sleep(time.Second) // the load workers end when idle
	})
}

// A peer that stays down is not flooded by the background probes: Gets of
// its keys every 10 ms for 10 s (1,000 of them) send it a few requests a
// second at most.
func TestPeerDownForLongIsProbedAFewTimesASecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHoCluster(t, cache.PeerPolicy{EjectAfter: 1, EjectFor: time.Second, NoHedge: true}, "a", "b")
		a, b := c.node("a"), c.node("b")
		b.down.Store(true)
		askEvery10ms(t, c, a)
		// Ejections of 1, 2, 4 s and the fourth's first 3 s: each probed
		// an eighth of its length after it began, then after doubling
		// waits up to once a second, and once at its end.
		if n := b.tries.Load(); n > 35 {
			t.Errorf("%d requests sent to b while it was down 10 s; want at most 35 (18 measured; 11 before the first ejection had background probes)", n)
		}
		time.Sleep(time.Second)
	})
}

// A peer that answers the memory-only probe but fails its requests (up,
// but unable to load) is readmitted by each probe, ejected again by the
// failures, and readmitted less often each time: over 10 s of Gets every
// 10 ms, it is sent few requests (47). A probe's answer readmits it but
// does not end its streak: if it did, every ejection would be the first,
// probed after an eighth of EjectFor, and the peer would get about 250.
func TestPeerThatFailsAfterEachReadmissionIsReadmittedLessOften(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHoCluster(t, cache.PeerPolicy{EjectAfter: 3, EjectFor: time.Second, NoHedge: true}, "a", "b")
		a, b := c.node("a"), c.node("b")
		b.sick.Store(true)
		askEvery10ms(t, c, a)
		if n := b.tries.Load(); n > 60 {
			t.Errorf("%d requests sent to b in 10 s (%d memory-only probes); want at most 60 (47 measured)", n, b.mem.Load())
		}
		time.Sleep(time.Second)
	})
}

// askEvery10ms has node a ask for 1,000 of b's keys, one every 10 ms, a
// tenth of them keys the source does not have, and fails on any answer
// but the source's.
func askEvery10ms(t *testing.T, c *hoCluster, a *hoNode) {
	t.Helper()
	present, absent := bKeys(c, "k", 900), bKeys(c, "absent", 100)
	for i := range 1000 {
		if i%10 == 9 {
			k := absent[i/10]
			if v, err := a.g.Get(context.Background(), k); !errors.Is(err, getter.ErrNotFound) {
				t.Fatalf("Get(%s) = %q, %v; want not found", k, v, err)
			}
		} else {
			k := present[i-i/10]
			if v, err := a.g.Get(context.Background(), k); err != nil || v.String() != "v:"+k {
				t.Fatalf("Get(%s) = %q, %v", k, v, err)
			}
		}
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
	}
}

// bKeys returns n keys that b owns in c, each prefix and a number ("k":
// the source has them; "absent": it does not).
func bKeys(c *hoCluster, prefix string, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if k := fmt.Sprintf("%s%d", prefix, i); c.node("a").peers.Owner(k) == "b" {
			keys = append(keys, k)
		}
	}
	return keys
}

// peerEjected reports whether g has ejected the peer at addr.
func peerEjected(g *cache.Group, addr string) bool {
	for _, p := range g.Stats().Peers {
		if p.Addr == addr {
			return p.Ejected
		}
	}
	return false
}

// plainPeer is a Peer whose far end does not tell a memory-only read
// from an ordinary one (a node of an older version, or a transport that
// drops the distinction): it serves every read of one key, OpPeek too, as
// an ordinary peer request (OpGet).
type plainPeer struct {
	addr string
	to   func() *cache.Registry
	down *atomic.Bool
	gets *atomic.Int64
}

func (p *plainPeer) Do(_ context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if (req.Op != cache.OpGet && req.Op != cache.OpPeek) || len(req.Keys) != 1 {
		return peertest.ErrReadOnly
	}
	if p.down.Load() {
		return errNodeDown
	}
	p.gets.Add(1)
	req.Op = cache.OpGet
	return serve(context.Background(), p.to(), req, reply)
}

func (p *plainPeer) Addr() string { return p.addr }

// The readmission probe (an OpPeek) reaches a peer whose far end cannot
// tell it from an ordinary read as an ordinary Get of a key its node was
// asked for: the peer is still readmitted within about EjectFor of answering, at a
// bounded cost: at most one such Get per EjectFor while it is ejected,
// which its node serves as any peer request (here, from its source).
func TestProbeOfOtherTransportIsAnOrdinaryGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		groups := map[string]*cache.Group{}
		regs := map[string]*cache.Registry{}
		var down atomic.Bool
		var gets, loads atomic.Int64 // b's peer requests, and its source's loads
		for _, self := range []string{"a", "b"} {
			peers, err := picker.NewPeers(self, func(addr string) cache.Peer {
				return &plainPeer{addr: addr, to: func() *cache.Registry { return regs[addr] }, down: &down, gets: &gets}
			}, &picker.Options{Replicas: 64, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if err := peers.Set("a", "b"); err != nil {
				t.Fatal(err)
			}
			src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
				if self == "b" {
					loads.Add(1)
				}
				return []byte("v:" + key), nil
			})
			regs[self] = cache.NewRegistry()
			g, err := regs[self].NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: peers, Logger: quiet,
				PeerPolicy: cache.PeerPolicy{EjectAfter: 1, EjectFor: time.Second, NoHedge: true}})
			if err != nil {
				t.Fatal(err)
			}
			groups[self] = g
		}
		a := groups["a"]
		owners, _ := picker.NewPeers("a", func(string) cache.Peer { return nil }, &picker.Options{Replicas: 64, Logger: quiet})
		_ = owners.Set("a", "b")
		n := 0
		key := func() string { // a key of b's that a has not asked for yet
			for {
				n++
				if k := fmt.Sprintf("k%d", n); owners.Owner(k) == "b" {
					return k
				}
			}
		}
		ejected := func() bool {
			for _, p := range a.Stats().Peers {
				if p.Addr == "b" {
					return p.Ejected
				}
			}
			return false
		}
		get := func(k string) {
			if v, err := a.Get(context.Background(), k); err != nil || v.String() != "v:"+k {
				t.Fatalf("Get(%s) = %q, %v", k, v, err)
			}
		}
		down.Store(true)
		for range 120 { // 12 s down: ejections of 1, 2, 4 and 8 s in a row
			get(key())
			time.Sleep(100 * time.Millisecond)
		}
		if !ejected() {
			t.Fatalf("b is not ejected after 12 s down: %+v %+v", a.Stats().Peers, a.Stats())
		}
		down.Store(false)
		back := time.Now()
		for ejected() && time.Since(back) < 30*time.Second {
			get(key())
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
		}
		d := time.Since(back)
		if d > 1500*time.Millisecond {
			t.Errorf("b was readmitted %v after it answered again; want within EjectFor (1 s) and a Get", d)
		}
		if g, most := gets.Load(), int64(d/time.Second)+1; g > most {
			t.Errorf("b served %d Gets while ejected for %v; want at most %d (one probe per EjectFor)", g, d, most)
		}
		if g, l := gets.Load(), loads.Load(); g == 0 || l != g {
			t.Errorf("b served %d Gets and loaded %d keys while ejected; want the probe, an ordinary Get, loaded", g, l)
		}
		time.Sleep(time.Second) // the load workers end when idle
	})
}
