package bench

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// GeeCache's groups with peers over the bare framed protocol of
// framed_test.go (BenchmarkMux's geecache-framed).

// framedPeer is a cache.Peer over a framedClient: Get only (the
// prototype carries no TTL, no "not found" and no writes).
type framedPeer struct {
	addr string
	fc   *framedClient
}

func (p *framedPeer) Get(ctx context.Context, _, key string) ([]byte, time.Duration, error) {
	v, err := p.fc.get(ctx, key)
	return v, -1, err
}

func (p *framedPeer) Remove(context.Context, string, string) error { return errors.ErrUnsupported }
func (p *framedPeer) Set(context.Context, string, string, []byte, time.Duration) error {
	return errors.ErrUnsupported
}
func (p *framedPeer) Addr() string { return p.addr }

// Batch is not carried by the framed transport: the group asks key by key.
func (p *framedPeer) Batch(context.Context, string, []string, bool, func(int, []byte, time.Duration, error)) error {
	return errors.ErrUnsupported
}

// newOurFramedCluster is n GeeCache nodes (groups as in newOurClusterOf,
// the default ring of package picker) whose peers talk the framed
// protocol: each node's framed server answers with its group's Get, and
// each node keeps one framed connection to every other node. A study of
// what GeeCache's own per-request costs leave of the framed transport's
// gain; of the protocol's semantics only the checksum of every value (no
// signature, limit, timeout, error answer, TTL or write).
func newOurFramedCluster(tb testing.TB, n int, budget int64, g getter.Getter) *muxTarget {
	groups := make([]*cache.Group, n)
	servers := make([]*framedServer, n)
	addrs := make([]string, n)
	ready := make(chan struct{}) // closed once groups is filled in
	for i := range n {
		servers[i] = newFramedServer(tb, func(key string) framedValue {
			<-ready
			v, err := groups[i].Get(context.Background(), key)
			if err != nil {
				return rawValue(nil) // the caller sees a wrong length
			}
			return v
		}, true)
		addrs[i] = servers[i].ln.Addr().String()
	}
	pickers := make([]*picker.Peers, n)
	for i := range n {
		p, err := picker.NewPeers(addrs[i], func(addr string) cache.Peer {
			fc, err := dialFramed(addr, true)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(fc.close)
			return &framedPeer{addr: addr, fc: fc}
		}, &picker.Options{Logger: quietLog()})
		if err != nil {
			tb.Fatal(err)
		}
		pickers[i] = p
		groups[i] = newGeeGroupOn(tb, cache.NewRegistry(), httpGroup, budget, g, p)
		if err := p.Set(addrs...); err != nil {
			tb.Fatal(err)
		}
	}
	close(ready)
	a := groups[0]
	var counters []*protoCounter
	for _, s := range servers {
		counters = append(counters, s.pc)
	}
	return &muxTarget{
		httpTarget: &httpTarget{
			get: func(ctx context.Context, key string) (int, error) {
				v, err := a.Get(ctx, key)
				return v.Len(), err
			},
			remote: func(key string) bool { return pickers[0].Owner(key) != addrs[0] },
			accepts: func() int64 {
				var n int64
				for _, s := range servers {
					n += s.ln.accepts.Load()
				}
				return n
			},
			peerErrors: func() int64 { return a.Stats().PeerErrors },
			hedges:     func() int64 { return a.Stats().Hedges },
			closeIdle:  func() {},
			warmOwners: func(ctx context.Context, keys []string) error {
				for _, k := range keys {
					o := slices.Index(addrs, pickers[0].Owner(k))
					if _, _, err := groups[o].GetLocal(ctx, k); err != nil {
						return err
					}
				}
				return nil
			},
			forget: func(keys []string) {
				for _, g := range groups {
					for _, k := range keys {
						g.RemoveLocal(k)
					}
				}
			},
		},
		framed:   true,
		counters: counters,
	}
}
