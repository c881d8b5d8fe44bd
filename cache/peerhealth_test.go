package cache_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// fakePeer is a controllable Peer: it fails, hangs until its
// caller's context ends, or answers "remote:"+key; it counts its calls.
type fakePeer struct {
	mode  atomic.Int32 // peerAnswers, peerFails, peerHangs
	calls atomic.Int64
}

const (
	peerAnswers int32 = iota
	peerFails
	peerHangs
)

func (p *fakePeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return answerReads(ctx, req, reply, p.get)
}

func (p *fakePeer) get(ctx context.Context, key string) ([]byte, time.Duration, error) {
	p.calls.Add(1)
	switch p.mode.Load() {
	case peerFails:
		return nil, 0, errors.New("connection refused")
	case peerHangs:
		<-ctx.Done()
		return nil, 0, ctx.Err()
	}
	return []byte("remote:" + key), -1, nil
}

func (p *fakePeer) Addr() string { return fmt.Sprintf("http://fake-peer-%p", p) }

// allRemote says every key is owned by the peer.
type allRemote struct{ p cache.Peer }

func (a allRemote) PickPeer(string) (cache.Peer, bool) { return a.p, true }

// newPeerGroup is a group for a test in a synctest bubble whose keys p
// owns, and the count of its local loads.
func newPeerGroup(t *testing.T, p cache.Peer, policy cache.PeerPolicy) (*cache.Group, *atomic.Int64) {
	t.Helper()
	t.Cleanup(settleBubble)
	var loads atomic.Int64
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		loads.Add(1)
		return []byte("local:" + key), nil
	})
	g, err := cache.NewRegistry().NewGroup("g", 0, src, &cache.GroupOptions{ // 0: nothing cached, every Get loads
		Peers: allRemote{p}, Logger: quiet, PeerPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return g, &loads
}

func TestFailingPeerIsEjectedAndProbedBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePeer{}
		g, _ := newPeerGroup(t, p, cache.PeerPolicy{EjectAfter: 3, EjectFor: time.Second, NoHedge: true})
		ctx := t.Context()
		p.mode.Store(peerFails)
		for i := range 3 {
			if v, err := g.Get(ctx, "k"); err != nil || v.String() != "local:k" {
				t.Fatalf("Get #%d = %q, %v; want the local fallback", i, v, err)
			}
		}
		if p.calls.Load() != 3 {
			t.Fatalf("peer called %d times, want 3", p.calls.Load())
		}
		// Ejected: no request reaches the peer, and every Get is answered.
		for range 50 {
			if v, err := g.Get(ctx, "k"); err != nil || v.String() != "local:k" {
				t.Fatalf("Get while ejected = %q, %v", v, err)
			}
		}
		s := g.Stats()
		if p.calls.Load() != 3 || s.EjectedLoads != 50 || len(s.Peers) != 1 || !s.Peers[0].Ejected || s.Peers[0].Ejections != 1 {
			t.Fatalf("while ejected: peer calls %d, stats %+v", p.calls.Load(), s)
		}
		// After the backoff (at most 1.25 s), one probe: it fails, and the
		// peer is ejected again, for longer.
		time.Sleep(1300 * time.Millisecond)
		_, _ = g.Get(ctx, "k")
		_, _ = g.Get(ctx, "k")
		if p.calls.Load() != 4 || g.Stats().Peers[0].Ejections != 2 {
			t.Fatalf("probe: peer calls %d (want 4), stats %+v", p.calls.Load(), g.Stats().Peers)
		}
		// Less than the doubled backoff, but EjectFor since the ejection:
		// one background probe; it fails, so the ejection goes on.
		time.Sleep(1300 * time.Millisecond)
		_, _ = g.Get(ctx, "k")
		synctest.Wait()
		if p.calls.Load() != 5 || !g.Stats().Peers[0].Ejected {
			t.Fatalf("second ejection: peer calls %d (want 4 and the background probe), stats %+v", p.calls.Load(), g.Stats().Peers)
		}
		// The peer recovers; the next probe brings it back.
		p.mode.Store(peerAnswers)
		time.Sleep(2 * time.Second)
		for range 3 {
			if v, err := g.Get(ctx, "k"); err != nil || v.String() != "remote:k" {
				t.Fatalf("after recovery Get = %q, %v", v, err)
			}
		}
		if s := g.Stats(); s.Peers[0].Ejected || s.Peers[0].ConsecutiveFailures != 0 || p.calls.Load() != 8 {
			t.Fatalf("after recovery: peer calls %d, stats %+v", p.calls.Load(), s.Peers)
		}
	})
}

func TestHungPeerIsHedgedThenEjected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePeer{}
		p.mode.Store(peerHangs)
		// SlowAfter after the hedge delay: at the same instant the fetch's
		// end and the hedge would race (the bubble's clock ties them).
		g, loads := newPeerGroup(t, p, cache.PeerPolicy{EjectAfter: 2, HedgeMin: time.Millisecond, HedgeMax: time.Millisecond,
			SlowAfter: 10 * time.Millisecond})
		ctx := t.Context()
		for i := range 2 {
			if v, err := g.Get(ctx, "k"); err != nil || v.String() != "local:k" {
				t.Fatalf("Get #%d = %q, %v; want the hedge's local value", i, v, err)
			}
		}
		s := g.Stats()
		if s.Hedges != 2 || s.HedgeWins != 2 || loads.Load() != 2 {
			t.Fatalf("stats %+v, loads %d; want 2 hedges won", s, loads.Load())
		}
		// The fetches the hedges beat go on until SlowAfter; the peer does not
		// answer them, so they fail, and it is ejected.
		testkit.WaitFor(t, "the ejection", func() bool { s := g.Stats(); return len(s.Peers) == 1 && s.Peers[0].Ejected })
		if s := g.Stats(); s.Peers[0].InFlight != 0 || s.PeerErrors != 0 {
			t.Fatalf("after the ejection: %+v; want no fetch left in flight, and no error seen by a caller", s)
		}
		// Ejected: the next Gets never reach the hung peer.
		for range 20 {
			_, _ = g.Get(ctx, "k")
		}
		if p.calls.Load() != 2 {
			t.Fatalf("the hung peer got %d requests; want 2", p.calls.Load())
		}
	})
}

// A peer slower than the hedge delay but alive is not ejected: the fetch
// a hedge beat goes on, the peer answers it, and that counts.
func TestSlowPeerThatAnswersStays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		p := &peerFunc{func(ctx context.Context, key string) ([]byte, error) {
			select {
			case <-release:
				return []byte("remote:" + key), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
		g, _ := newPeerGroup(t, p, cache.PeerPolicy{EjectAfter: 1, HedgeMin: time.Millisecond, HedgeMax: time.Millisecond,
			SlowAfter: time.Hour})
		ctx := t.Context()
		for i := range 3 {
			if v, err := g.Get(ctx, fmt.Sprint("k", i)); err != nil || !strings.HasPrefix(v.String(), "local:") {
				t.Fatalf("Get = %q, %v; want the hedge's value", v, err)
			}
		}
		close(release) // the slow peer answers the three fetches
		testkit.WaitFor(t, "the fetches to end", func() bool { s := g.Stats(); return len(s.Peers) == 1 && s.Peers[0].InFlight == 0 })
		if s := g.Stats(); s.Peers[0].Ejected || s.Peers[0].Ejections != 0 || s.HedgeWins != 3 {
			t.Fatalf("stats %+v; want 3 hedges won and the slow peer not ejected", s)
		}
	})
}

// A hedge joins the local load a peer request started for the same key:
// still one local load per key.
func TestHedgeSharesTheLocalLoad(t *testing.T) {
	release := make(chan struct{})
	var loads atomic.Int64
	src := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		loads.Add(1)
		<-release
		return []byte("local:" + key), nil
	})
	p := &fakePeer{}
	p.mode.Store(peerHangs)
	reg := cache.NewRegistry()
	g, err := reg.NewGroup("g", 1<<10, src, &cache.GroupOptions{Peers: allRemote{p}, Logger: quiet,
		PeerPolicy: cache.PeerPolicy{HedgeMin: time.Millisecond, HedgeMax: time.Millisecond, SlowAfter: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	var wg sync.WaitGroup
	results := make(chan string, 2)
	wg.Go(func() { v, _, _ := serveKey(ctx, reg, g, cache.OpGet, "k"); results <- v.String() }) // a peer's request: loads here
	testkit.WaitFor(t, "the peer request's load", func() bool { return loads.Load() == 1 })
	wg.Go(func() { v, _ := g.Get(ctx, "k"); results <- v.String() }) // forwards, hangs, hedges
	// The hedge has joined the peer request's load (a shared wait).
	testkit.WaitFor(t, "the hedge to join the load", func() bool { s := g.Stats(); return s.Hedges == 1 && s.DedupWaits == 1 })
	close(release)
	wg.Wait()
	close(results)
	for v := range results {
		if v != "local:k" {
			t.Fatalf("got %q", v)
		}
	}
	if loads.Load() != 1 {
		t.Fatalf("%d local loads; want 1", loads.Load())
	}
}

func TestBusyPeerFallsBackInsteadOfQueueing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		var inPeer atomic.Int64
		peer := &peerFunc{func(ctx context.Context, key string) ([]byte, error) {
			inPeer.Add(1)
			<-block
			return []byte("remote:" + key), nil
		}}
		g, loads := newPeerGroup(t, peer, cache.PeerPolicy{MaxInFlight: 2, NoHedge: true})
		ctx := t.Context()
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() { _, _ = g.Get(ctx, string(rune('a'+i))) })
		}
		testkit.WaitFor(t, "two fetches in flight", func() bool { return inPeer.Load() == 2 })
		if v, err := g.Get(ctx, "c"); err != nil || v.String() != "local:c" {
			t.Fatalf("third Get = %q, %v; want a local load at once", v, err)
		}
		close(block)
		wg.Wait()
		if s := g.Stats(); s.PeerBusy != 1 || loads.Load() != 1 || s.Peers[0].InFlight != 0 {
			t.Fatalf("stats %+v, local loads %d", s, loads.Load())
		}
	})
}

// peerFunc is a Peer made of a function; a pointer, so that the group
// can tell peers apart (see PeerPolicy).
type peerFunc struct {
	f func(ctx context.Context, key string) ([]byte, error)
}

func (p *peerFunc) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return answerReads(ctx, req, reply, func(ctx context.Context, key string) ([]byte, time.Duration, error) {
		v, err := p.f(ctx, key)
		return v, -1, err
	})
}

func (p *peerFunc) Addr() string { return fmt.Sprintf("peerFunc@%p", p) }

func TestBadPeerPolicyIsRefused(t *testing.T) {
	for _, p := range []cache.PeerPolicy{{EjectAfter: -1}, {MaxInFlight: -1}, {SlowAfter: -1}, {HedgeMin: time.Second, HedgeMax: time.Millisecond}} {
		if _, err := cache.NewRegistry().NewGroup("g", 1, getter.Map(nil), &cache.GroupOptions{PeerPolicy: p}); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("%+v: err = %v, want ErrConfig", p, err)
		}
	}
}

// listedPeers is a PeerPicker over a changing list of peers.
type listedPeers struct {
	mu    sync.Mutex
	peers []cache.Peer
}

func (l *listedPeers) PickPeer(key string) (cache.Peer, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.peers[int(key[len(key)-1])%len(l.peers)], true
}

func (l *listedPeers) ListPeers() []cache.Peer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]cache.Peer(nil), l.peers...)
}

// The state of a peer that left the ring is forgotten.
func TestPeersThatLeftAreForgotten(t *testing.T) {
	a, b := &fakePeer{}, &fakePeer{}
	l := &listedPeers{peers: []cache.Peer{a, b}}
	g, err := cache.NewRegistry().NewGroup("g", 1<<10, getter.Map(nil), &cache.GroupOptions{Peers: l, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k0", "k1", "k2", "k3"} {
		_, _ = g.Get(t.Context(), k)
	}
	if n := len(g.Stats().Peers); n != 2 {
		t.Fatalf("%d peers in Stats; want 2", n)
	}
	l.mu.Lock()
	l.peers = []cache.Peer{a}
	l.mu.Unlock()
	if n := len(g.Stats().Peers); n != 1 {
		t.Fatalf("%d peers in Stats after one left; want 1", n)
	}
}

// EjectFor is how long the first ejection lasts, also when it is longer
// than MaxEjectFor's default (30 s) and MaxEjectFor is left at 0; a
// MaxEjectFor set below EjectFor cannot work and is refused.
func TestEjectForLongerThanTheDefaultMaxIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePeer{}
		p.mode.Store(peerFails)
		g, _ := newPeerGroup(t, p, cache.PeerPolicy{EjectAfter: 1, EjectFor: time.Minute})
		if _, err := g.Get(t.Context(), "k"); err != nil {
			t.Fatal(err) // loaded locally after the failure
		}
		time.Sleep(45 * time.Second) // no Get meanwhile: no background probe
		if s := g.Stats(); len(s.Peers) != 1 || !s.Peers[0].Ejected {
			t.Fatalf("45 s into an ejection of EjectFor 1m: %+v; want the peer still ejected", s.Peers)
		}
	})
	_, err := cache.NewRegistry().NewGroup("g", 1, getter.Map(nil), &cache.GroupOptions{
		PeerPolicy: cache.PeerPolicy{EjectFor: time.Minute, MaxEjectFor: time.Second}})
	if !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("MaxEjectFor below EjectFor: err = %v, want ErrConfig", err)
	}
}

// A HedgeMin above HedgeMax's default (1 s) with HedgeMax left at 0 is
// taken: HedgeMax 0 means max(1 s, HedgeMin), so a Get of a key whose
// owner hangs is hedged after HedgeMin. (NewGroup failed with "HedgeMax 1s
// is below HedgeMin", a HedgeMax the caller never set.) A HedgeMax set
// below HedgeMin is still ErrConfig.
func TestHedgeMinLongerThanTheDefaultMaxIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePeer{}
		p.mode.Store(peerHangs)
		g, loads := newPeerGroup(t, p, cache.PeerPolicy{HedgeMin: 2 * time.Second})
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // the transport's timeout
		defer cancel()
		start := time.Now()
		v, err := g.Get(ctx, "k")
		if err != nil || v.String() != "local:k" {
			t.Fatalf("Get = %q, %v; want the hedge's local load", v, err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("the Get took %v (bubble time); want HedgeMin, 2s", d)
		}
		if loads.Load() != 1 {
			t.Fatalf("%d local loads, want the hedge's 1", loads.Load())
		}
	})
	_, err := cache.NewRegistry().NewGroup("g", 1, getter.Map(nil), &cache.GroupOptions{
		PeerPolicy: cache.PeerPolicy{HedgeMin: 2 * time.Second, HedgeMax: time.Second}})
	if !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("HedgeMax below HedgeMin: err = %v, want ErrConfig", err)
	}
}
