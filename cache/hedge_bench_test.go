package cache_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/peertest"
)

// instantPeer owns every key and answers at once with a 64-byte value.
type instantPeer struct {
	peertest.ReadOnly
	value []byte
}

func (p *instantPeer) Get(context.Context, string, string) ([]byte, time.Duration, error) {
	return p.value, -1, nil
}

func (*instantPeer) Addr() string { return "http://instant-peer" }

func (p *instantPeer) PickPeer(string) (cache.PeerGetter, bool) { return p, true }

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
