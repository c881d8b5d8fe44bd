package cache_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// A Peer that panics, on the hedging path (its own goroutine) and
// without hedging, gives an error wrapping ErrGetterPanic... and the
// fallback's value; it neither crashes the process nor leaks its slot.
func TestPanickingPeerIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, noHedge := range []bool{false, true} {
			p := &peerFunc{func(context.Context, string) ([]byte, error) { panic("peer bug") }}
			g, loads := newPeerGroup(t, p, cache.PeerPolicy{NoHedge: noHedge})
			if v, err := g.Get(t.Context(), "k"); err != nil || v.String() != "local:k" {
				t.Fatalf("noHedge=%v: Get = %q, %v; want the local fallback", noHedge, v, err)
			}
			testkit.WaitFor(t, "the fetch to settle", func() bool { s := g.Stats(); return len(s.Peers) == 1 && s.Peers[0].InFlight == 0 })
			if s := g.Stats(); s.Peers[0].ConsecutiveFailures != 1 || loads.Load() != 1 {
				t.Fatalf("noHedge=%v: %+v; want one failure counted", noHedge, s.Peers)
			}
		}
	})
}

// uncomparablePeer is a Peer whose dynamic type cannot be compared.
type uncomparablePeer struct{ _ []string } // a slice field makes it uncomparable

// Do answers a read of one key, and takes a write of one key; anything
// else is unsupported.
func (uncomparablePeer) Do(_ context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if len(req.Keys) != 1 {
		return errors.ErrUnsupported
	}
	switch req.Op {
	case cache.OpGet, cache.OpPeek:
		reply.Answer(0, cache.ByteViewOf([]byte("remote:"+req.Keys[0])), -1, nil)
	case cache.OpSet, cache.OpRemove:
	default:
		return errors.ErrUnsupported
	}
	return nil
}

func (uncomparablePeer) Addr() string { return "uncomparable" }

type uncomparablePicker struct{ p uncomparablePeer }

func (u uncomparablePicker) PickPeer(string) (cache.Peer, bool) { return u.p, true }
func (u uncomparablePicker) ListPeers() []cache.Peer            { return []cache.Peer{u.p} }

func TestUncomparablePeersWork(t *testing.T) {
	g, err := cache.NewRegistry().NewGroup("g", 1<<10, getter.Map(nil), &cache.GroupOptions{Peers: uncomparablePicker{}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := g.Get(t.Context(), "k"); err != nil || v.String() != "remote:k" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if err := g.Remove(t.Context(), "k"); err != nil {
		t.Fatalf("Remove = %v", err)
	}
	if err := g.Set(t.Context(), "k", []byte("v"), 0); err != nil {
		t.Fatalf("Set = %v", err)
	}
}

// Gets of an expired value count once each, and a background refresh is
// not a Get.
func TestStatsCountExpiredGetsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &versioned{}
		g := newFreshGroup(t, src, cache.GroupOptions{TTL: time.Minute})
		mustGet(t, g, "k", "k@0")
		time.Sleep(2 * time.Minute)
		mustGet(t, g, "k", "k@0")
		if s := g.Stats(); s.Gets != 2 || s.Hits != 0 {
			t.Fatalf("stats %+v; want 2 Gets, 0 hits (the second found only an expired entry)", s)
		}
		sw := newFreshGroup(t, src, cache.GroupOptions{TTL: time.Minute, StaleWhileRevalidate: time.Hour})
		mustGet(t, sw, "k", "k@0")
		time.Sleep(2 * time.Minute)
		mustGet(t, sw, "k", "k@0") // stale, and a refresh in the background
		testkit.WaitFor(t, "the refresh", func() bool { return sw.InFlight() == 0 && src.loads.Load() == 4 })
		if s := sw.Stats(); s.Gets != 2 || s.Hits != 1 {
			t.Fatalf("stats %+v; want 2 Gets (the refresh is not one), 1 hit", s)
		}
	})
}

// A TTL too large to add to the time is "forever", not "already expired".
func TestHugeTTLDoesNotOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &versioned{}
		g := newFreshGroup(t, src, cache.GroupOptions{TTL: math.MaxInt64, StaleWhileRevalidate: math.MaxInt64})
		for range 3 {
			mustGet(t, g, "k", "k@0")
		}
		if src.loads.Load() != 1 {
			t.Fatalf("%d loads with a TTL of MaxInt64; want 1", src.loads.Load())
		}
	})
}
