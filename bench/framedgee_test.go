package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// GeeCache's groups with peers over the bare framed protocol of
// framed_test.go (BenchmarkMux's geecache-framed).

// framedPeer is a cache.Peer over a framedClient: a Get of one key only
// (the prototype carries no TTL, no "not found", no memory-only read, no
// offer and no writes); the group asks a batch key by key.
type framedPeer struct {
	addr string
	fc   *framedClient
}

func (p *framedPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if req.Op != cache.OpGet || len(req.Keys) != 1 {
		return fmt.Errorf("framed peer: %v of %d keys: %w", req.Op, len(req.Keys), errors.ErrUnsupported)
	}
	v, err := p.fc.get(ctx, req.Keys[0])
	if err != nil {
		return err
	}
	reply.Answer(0, cache.ByteViewOf(v), -1, nil)
	return nil
}

func (p *framedPeer) Addr() string { return p.addr }

// newOurFramedCluster is n GeeCache nodes (groups as in newOurClusterOf,
// the default ring of package picker) whose peers talk the framed
// protocol: each node's framed server answers with its group's Get, and
// each node keeps one framed connection to every other node. A study of
// what GeeCache's own per-request costs leave of the framed transport's
// gain; of the protocol's semantics only the checksum of every value (no
// signature, limit, timeout, error answer, TTL or write).
func newOurFramedCluster(tb testing.TB, n int, budget int64, g getter.Getter) *muxTarget {
	groups := make([]*cache.Group, n)
	regs := make([]*cache.Registry, n)
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
		regs[i] = cache.NewRegistry()
		groups[i] = newGeeGroupOn(tb, regs[i], httpGroup, budget, g, p)
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
					if err := warmHere(ctx, regs[o], httpGroup, k); err != nil {
						return err
					}
				}
				return nil
			},
			forget: func(keys []string) {
				for _, reg := range regs {
					dropHere(context.Background(), reg, httpGroup, keys...)
				}
			},
		},
		framed:   true,
		counters: counters,
	}
}
