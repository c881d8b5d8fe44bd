//go:build !js

package nethttp

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
)

func mustHandler(t testing.TB, reg *cache.Registry, o *handlerOptions) *handler {
	t.Helper()
	if o == nil {
		o = &handlerOptions{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := newHandler(reg, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustSet(t testing.TB, p *Pool, addrs ...string) {
	t.Helper()
	if err := p.Set(addrs...); err != nil {
		t.Fatal(err)
	}
}

// peerPeek is peerGet of the key from the peer's memory only (cache.OpPeek).
func peerPeek(ctx context.Context, p cache.Peer, group, key string) ([]byte, time.Duration, error) {
	return askOne(ctx, p, cache.OpPeek, group, key, nil)
}

// peerBatch sends keys of group to p as a group does: a cache.OpGet of
// them, each answer to each, or with remove an OpRemove of them (an
// OpPurge without keys).
func peerBatch(ctx context.Context, p cache.Peer, group string, keys []string, remove bool, each func(i int, v []byte, ttl time.Duration, err error)) error {
	req := cache.PeerRequest{Op: cache.OpGet, Group: group, Keys: keys}
	switch {
	case remove && len(keys) == 0:
		req.Op = cache.OpPurge
	case remove:
		req.Op = cache.OpRemove
	}
	return p.Do(ctx, req, answers{each: each})
}

// peerRemove drops key at p (a cache.OpRemove of one key).
func peerRemove(ctx context.Context, p cache.Peer, group, key string) error {
	return p.Do(ctx, cache.PeerRequest{Op: cache.OpRemove, Group: group, Keys: []string{key}}, answers{})
}

// peerOffer offers keys to p, their owner now, as a node whose ring
// changed does (cache.OpOffer).
func peerOffer(ctx context.Context, p cache.Peer, group string, keys []string) error {
	return p.Do(ctx, cache.PeerRequest{Op: cache.OpOffer, Group: group, Keys: keys}, answers{})
}

// localPeer is a node's Registry as a cache.Peer: its requests are
// answered in process, by ServePeer, from that node alone.
type localPeer struct{ reg *cache.Registry }

func (p localPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return p.reg.ServePeer(ctx, req, reply)
}

func (localPeer) Addr() string { return "local" }

func newLocalPeer(reg *cache.Registry) cache.Peer { return localPeer{reg} }
