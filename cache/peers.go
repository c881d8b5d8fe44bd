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

// A PeerGetter is one other node, as a group sees it: it fetches a value
// from the group of the same name there, with the lifetime the owner gives
// it, and changes a key there, so that Group.Remove and Group.Set reach
// every node. It is the one interface a transport implements: the group
// looks for no other method. Implementations must be safe for concurrent
// use.
//
// A transport that cannot change keys (a read-only one) says so by
// returning an error wrapping errors.ErrUnsupported from Remove and Set: a
// Remove or Set then names the peer in its *UpdateError, and does not
// retry it.
type PeerGetter interface {
	// Get fetches key of group from the peer. ttl is the lifetime the
	// owner gives the value, or with a "not found" how long that answer
	// may be cached: 0 for no end, and negative when the transport does
	// not carry it (the asking group's TTL and NotFoundTTL apply then).
	// A key the peer reports missing yields an error wrapping
	// getter.ErrNotFound. The peer must not keep or change the returned
	// slice afterwards.
	Get(ctx context.Context, group, key string) (value []byte, ttl time.Duration, err error)

	// Remove drops key of group from the peer's memory.
	Remove(ctx context.Context, group, key string) error

	// Set stores value under key of group at the peer, which owns it, for
	// ttl (0: the peer's group's default).
	Set(ctx context.Context, group, key string, value []byte, ttl time.Duration) error

	// Addr names the peer, one address per peer (a transport's base URL,
	// say): UpdateError.Failed, PeerStats, logs and Tracer spans name it
	// so, and the background retries of a write find the peer again by it
	// in the peer set's list.
	Addr() string
}

// peerGet fetches from peer. A PeerGetter that panics gives a
// *PanicError, a failed fetch: the group logs it and loads the key itself,
// rather than failing the whole load.
func peerGet(ctx context.Context, peer PeerGetter, group, key string) (v []byte, ttl time.Duration, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, ttl, err = nil, 0, &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return peer.Get(ctx, group, key)
}
