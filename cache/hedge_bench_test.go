package cache_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// instantPeer owns every key and answers at once with a 64-byte value.
type instantPeer struct{ value []byte }

func (p *instantPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return answerReads(ctx, req, reply, func(context.Context, string) ([]byte, time.Duration, error) { return p.value, -1, nil })
}

func (*instantPeer) Addr() string { return "http://instant-peer" }

func (p *instantPeer) PickPeer(string) (cache.Peer, bool) { return p, true }

// BenchmarkFetchFromPeer measures the machinery of a fetch from the owner
// peer (the peer itself answers at once): a fresh key each time, with a
// context that can be cancelled, with hedging (the default) and without.
func BenchmarkFetchFromPeer(b *testing.B) {
	peer := &instantPeer{value: make([]byte, 64)}
	for _, bc := range []struct {
		name   string
		policy cache.PeerPolicy
	}{{"hedged", cache.PeerPolicy{}}, {"no-hedge", cache.PeerPolicy{NoHedge: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			g, err := cache.NewRegistry().NewGroup("scores", 32<<20, getter.Func(func(context.Context, string) ([]byte, error) {
				b.Fatal("loaded locally")
				return nil, nil
			}), &cache.GroupOptions{Peers: peer, Logger: quiet, PeerPolicy: bc.policy})
			if err != nil {
				b.Fatal(err)
			}
			ctx := b.Context()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := g.Get(ctx, strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A hedged fetch that the owner answers at once costs at most 8
// allocations more than an unhedged one: its state, the hedge's timer and
// the owner's sign-of-life callback, but no goroutine, context or channel
// for a hedge that never starts. (It cost 24 more when each fetch ran on a
// goroutine of its own with its own context, timer, AfterFunc and
// closures.)
func TestHedgedFetchAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures are not asserted under the race detector")
	}
	peer := &instantPeer{value: make([]byte, 64)}
	allocs := func(policy cache.PeerPolicy) float64 {
		g, err := cache.NewRegistry().NewGroup("scores", 32<<20, getter.Func(func(context.Context, string) ([]byte, error) {
			t.Error("loaded locally")
			return nil, nil
		}), &cache.GroupOptions{Peers: peer, Logger: quiet, PeerPolicy: policy})
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		return testing.AllocsPerRun(200, func() {
			i++
			if v, err := g.Get(t.Context(), strconv.Itoa(i)); err != nil || v.Len() != 64 {
				t.Fatalf("Get = %d bytes, %v", v.Len(), err)
			}
		})
	}
	hedged, plain := allocs(cache.PeerPolicy{}), allocs(cache.PeerPolicy{NoHedge: true})
	t.Logf("allocations per fetch: %.1f hedged, %.1f without hedging", hedged, plain)
	if hedged > plain+8 {
		t.Fatalf("a hedged fetch makes %.1f allocations, one without hedging %.1f; want at most 8 more", hedged, plain)
	}
}
