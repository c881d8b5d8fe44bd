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
	// itself; a nil peer is taken as ok false.
	PickPeer(key string) (peer PeerGetter, ok bool)
}

// pickPeer is g.peers.PickPeer (g.peers is not nil), with a nil peer taken
// as none: a PeerPicker that says another node owns key but names no peer
// leaves key to this node, rather than a panic where the peer is used.
func (g *Group) pickPeer(key string) (PeerGetter, bool) {
	p, ok := g.peers.PickPeer(key)
	return p, ok && p != nil
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
	//
	// A group also calls Get for requests of its own: after the ring
	// changed, it asks a key's previous owner for the key before loading
	// it (handoff), and it asks an ejected peer, in the background, for a
	// key it owns, to readmit it as soon as it answers (at most one such
	// probe per peer at a time and per PeerPolicy.EjectFor). This module's
	// transports send both as memory-only requests, which the peer answers
	// from memory without loading anything. To another PeerGetter they are
	// ordinary Gets, which it cannot tell apart: correct all the same (any
	// answer readmits the peer; a handoff keeps what the previous owner
	// answers), at the cost of the load its node may do to answer.
	Get(ctx context.Context, group, key string) (value []byte, ttl time.Duration, err error)

	// Remove drops key of group from the peer's memory.
	Remove(ctx context.Context, group, key string) error

	// Set stores value under key of group at the peer, which owns it, for
	// ttl (0: the peer's group's default).
	Set(ctx context.Context, group, key string, value []byte, ttl time.Duration) error

	// Batch sends one request to the peer for many keys of group, for
	// Group.GetMany, Group.RemoveMany and Group.Purge. With remove false it
	// fetches keys and calls each once for every key the peer answered,
	// with the key's index in keys and what Get would return for it (a
	// per-key error wrapping errors.ErrUnsupported: the peer did not fit
	// the key in the batch, and the group asks for it alone); a key the
	// peer did not answer is a failure of the peer for that key only. each
	// is called from Batch's goroutine, before Batch returns. With remove
	// true it drops keys from the peer's memory, as Remove does each, and
	// with no keys at all it drops every key of group there (Purge); each
	// is nil then. A transport splits a batch over its limits into as many
	// requests as it needs.
	//
	// An error is for the batch as a whole. A transport (or a peer of an
	// older protocol version) that cannot send batches returns one
	// wrapping errors.ErrUnsupported: the group then sends single Gets or
	// Removes instead.
	Batch(ctx context.Context, group string, keys []string, remove bool, each func(i int, value []byte, ttl time.Duration, err error)) error

	// Addr names the peer, one address per peer (a transport's base URL,
	// say): UpdateError.Failed, PeerStats, logs and Tracer spans name it
	// so, and the background retries of a write find the peer again by it
	// in the peer set's list.
	Addr() string
}

// peerBatch is Batch of peer, with a panic turned into a *PanicError.
func peerBatch(ctx context.Context, peer PeerGetter, group string, keys []string, remove bool, each func(int, []byte, time.Duration, error)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return peer.Batch(ctx, group, keys, remove, each)
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

// keepPeer keeps the owner's answer a for key (a value, or with a.err a
// "not found") in the hot cache, for the lifetime peerTTL gives it, unless
// key changed since gen; the callers get it in any case. A next node's
// answer (fromOwner false: asked because the owner is out) is not kept: a
// write reaches that node no sooner than this one, so a copy of what it
// answered could outlive a write this node has already seen. The next Get
// asks it again.
func (g *Group) keepPeer(key string, a keyAnswer, gen uint64, fromOwner bool) (entry, error) {
	ttl, keep := g.peerTTL(a.ttl, a.err)
	if !keep || !fromOwner {
		return entry{v: a.v}, a.err
	}
	return g.keep(g.mem.hot, key, a.v, ttl, a.err, gen)
}

// peerTTL is how long this node keeps a peer's answer (a value, or with
// err a "not found") whose transport gave ttl: that lifetime (0: no end),
// or this group's TTL or NotFoundTTL when the transport does not say (ttl
// < 0). keep is false for an answer the peer served stale or all but
// expired (0 < ttl <= 1 ms): the callers get it, but no copy is kept that
// could be served stale again, for this node's own stale window on top of
// the peer's. Answers from a key's owner (Get, GetMany) and from its
// previous owner (handoff) follow these rules alike.
func (g *Group) peerTTL(ttl time.Duration, err error) (time.Duration, bool) {
	switch {
	case ttl < 0:
		if err != nil {
			return g.fresh.notFoundTTL, true
		}
		return g.fresh.ttl, true
	case ttl > 0 && ttl <= time.Millisecond:
		return 0, false
	}
	return ttl, true
}
