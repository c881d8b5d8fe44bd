package cache_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// leavingPeer owns every key by p, and lists p as a peer while it is in the
// ring (in false: p has left it).
type leavingPeer struct {
	p  cache.Peer
	mu sync.Mutex
	in bool
}

func (l *leavingPeer) PickPeer(string) (cache.Peer, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.p, true
}

func (l *leavingPeer) ListPeers() []cache.Peer {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.in {
		return nil
	}
	return []cache.Peer{l.p}
}

func (l *leavingPeer) set(in bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.in = in
}

// Stats observes and changes nothing: a peer ejected, gone from the ring
// while Stats is read, and back again is still ejected: Stats must not
// forget the state of the peers that have left the ring. A peer that has
// left is not in Stats.Peers, called twice or not.
func TestStatsChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t.Cleanup(settleBubble)
		p := &fakePeer{}
		p.mode.Store(peerFails)
		peers := &leavingPeer{p: p, in: true}
		g, err := cache.NewRegistry().NewGroup("g", 0, getter.Map(map[string]string{"k": "local"}), &cache.GroupOptions{
			Peers: peers, Logger: quiet, PeerPolicy: cache.PeerPolicy{EjectAfter: 1, EjectFor: time.Hour, NoHedge: true}})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, g, "k", "local") // the peer fails once: ejected
		if s := g.Stats(); len(s.Peers) != 1 || !s.Peers[0].Ejected {
			t.Fatalf("after a failure with EjectAfter 1: peers %+v; want the peer ejected", s.Peers)
		}
		peers.set(false)
		for range 2 {
			if s := g.Stats(); len(s.Peers) != 0 {
				t.Fatalf("a peer that left the ring is in Stats: %+v", s.Peers)
			}
		}
		peers.set(true)
		p.mode.Store(peerAnswers)
		mustGet(t, g, "k", "local") // still ejected: loaded here
		if s := g.Stats(); p.calls.Load() != 1 || len(s.Peers) != 1 || !s.Peers[0].Ejected || s.Peers[0].Ejections != 1 {
			t.Fatalf("after Stats while the peer was away: %d peer calls (want 1), peers %+v (want it still ejected)", p.calls.Load(), s.Peers)
		}
		if s := g.Stats(); s.EjectedLoads != 1 {
			t.Fatalf("EjectedLoads = %d; want 1", s.EjectedLoads)
		}
	})
}

// The state of a peer that left the ring is forgotten when the group first
// sees a new peer, so that a changing cluster's state stays bounded: an
// ejected peer that left, and came back after another joined, starts anew.
func TestLeftPeersAreForgottenWhenAPeerJoins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t.Cleanup(settleBubble)
		a, b := &fakePeer{}, &fakePeer{}
		a.mode.Store(peerFails)
		owner := &leavingPeer{p: a, in: true}
		g, err := cache.NewRegistry().NewGroup("g", 0, getter.Map(map[string]string{"k": "local"}), &cache.GroupOptions{
			Peers: owner, Logger: quiet, PeerPolicy: cache.PeerPolicy{EjectAfter: 1, EjectFor: time.Hour, NoHedge: true}})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, g, "k", "local") // a fails once: ejected
		owner.mu.Lock()
		owner.p = b // a leaves, b joins and owns every key
		owner.mu.Unlock()
		b.mode.Store(peerAnswers)
		mustGet(t, g, "k", "remote:k")
		owner.mu.Lock()
		owner.p = a // a is back
		owner.mu.Unlock()
		a.mode.Store(peerAnswers)
		mustGet(t, g, "k", "remote:k")
		if s := g.Stats(); len(s.Peers) != 1 || s.Peers[0].Ejected || s.Peers[0].Ejections != 0 {
			t.Fatalf("peers %+v; want a alone, with no ejection remembered", s.Peers)
		}
	})
}

// Stats.Gets counts this node's callers' Gets (a GetMany's keys each
// count as one) and nothing its peers asked: a node whose callers made N
// Gets and that served peers' requests of every kind (an OpGet of one key
// or of many, memory-only OpPeeks), hits and misses alike, reports Gets N.
func TestStatsGetsLeaveOutPeersRequests(t *testing.T) {
	reg := cache.NewRegistry()
	g, err := reg.NewGroup("g", 1<<20,
		getter.Map(map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}), &cache.GroupOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	callers := 0
	for _, k := range []string{"a", "a", "b", "missing"} { // miss, hit, miss, miss
		_, _ = g.Get(ctx, k)
		callers++
	}
	many := []string{"a", "c", "c"}
	g.GetMany(ctx, many, func(int, cache.ByteView, error) {})
	callers += len(many)

	peer := 0
	for _, k := range []string{"a", "d", "d", "missing"} { // hit, miss, hit, miss
		if _, _, err := serveKey(ctx, reg, g, cache.OpGet, k); err != nil && k != "missing" {
			t.Fatalf("OpGet(%q): %v", k, err)
		}
		peer++
	}
	batch := []string{"a", "e", "zzz"}
	if err := reg.ServePeer(ctx, cache.PeerRequest{Op: cache.OpGet, Group: "g", Keys: batch}, newAnswers(len(batch))); err != nil {
		t.Fatal(err)
	}
	peer += len(batch)
	memoryOnly := 0
	for _, k := range []string{"a", "b", "cold"} { // held, held, not held
		_, _, _ = serveKey(ctx, reg, g, cache.OpPeek, k)
		memoryOnly++
	}

	s := g.Stats()
	if s.Gets != int64(callers) || s.PeerRequests != int64(peer) || s.HandoffServed != int64(memoryOnly) {
		t.Fatalf("Gets %d, PeerRequests %d, HandoffServed %d; want %d, %d, %d",
			s.Gets, s.PeerRequests, s.HandoffServed, callers, peer, memoryOnly)
	}
	// Hits counts every lookup answered from memory: the callers' second
	// a and GetMany's a (its keys are looked up before any loads), the
	// peers' a, second d and batch's a, and the held a and b.
	if s.Hits != 2+3+2 {
		t.Errorf("Hits %d; want 7", s.Hits)
	}
}
