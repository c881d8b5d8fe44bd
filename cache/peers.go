package cache

import (
	"context"
	"runtime/debug"
	"time"
)

// A PeerPicker locates the peer that owns a key. Transports implement it
// (see package picker for a consistent-hash implementation that works with
// any of them).
type PeerPicker interface {
	// PickPeer returns the peer that owns key. ok is false when this node
	// owns the key (or there are no peers), and the group loads the key
	// itself.
	PickPeer(key string) (peer PeerGetter, ok bool)
}

// A PeerGetter fetches a value from the group of the same name on another
// node. Implementations must return an error wrapping getter.ErrNotFound
// when the peer reports that the key does not exist, and must not keep or
// change the returned slice afterwards.
type PeerGetter interface {
	Get(ctx context.Context, group, key string) ([]byte, error)
}

// A PeerTTLGetter is a PeerGetter whose transport also carries the
// lifetime the owner gives a value (or its "not found"): 0 for none. A
// group keeps the copy it fetched for that long, so that it expires when
// the owner's does. GeeCache's transports implement it.
type PeerTTLGetter interface {
	GetTTL(ctx context.Context, group, key string) (value []byte, ttl time.Duration, err error)
}

// peerGet fetches from peer, with the owner's TTL if its transport says,
// else a TTL of -1. A PeerGetter that panics gives a *PanicError: the
// fetch may run on a goroutine of its own (see fetchHedged), where nothing
// else would recover it.
func peerGet(ctx context.Context, peer PeerGetter, group, key string) (v []byte, ttl time.Duration, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, ttl, err = nil, 0, &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	if tg, ok := peer.(PeerTTLGetter); ok {
		return tg.GetTTL(ctx, group, key)
	}
	v, err = peer.Get(ctx, group, key)
	return v, -1, err
}
