package cache

import (
	"context"
	"errors"
	"fmt"
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
	PickPeer(key string) (peer Peer, ok bool)
}

// pickPeer is g.peers.PickPeer (g.peers is not nil), with a nil peer taken
// as none: a PeerPicker that says another node owns key but names no peer
// leaves key to this node, rather than a panic where the peer is used.
func (g *Group) pickPeer(key string) (Peer, bool) {
	p, ok := g.peers.PickPeer(key)
	return p, ok && p != nil
}

// A Peer is one other node, as a group sees it. A transport implements
// it: Do carries a PeerRequest to that node, where the transport hands it
// to the node's Registry.ServePeer, and carries the answers back to reply.
// Everything one node asks of another is a PeerRequest, and everything it
// hears back goes through PeerReply: the group reads nothing else from
// the transport, and nothing from ctx but its deadline and cancellation.
// Implementations must be safe for concurrent use.
//
// The package cachetest checks a transport against this contract.
type Peer interface {
	// Do sends req to the peer and gives what it answers to reply, from
	// Do's goroutine (or ones Do waits for) and before Do returns. For
	// OpGet and OpPeek that is reply.Answer once per key the peer
	// answered; a key it did not answer is a failure of the peer for that
	// key only. reply.Loading relays the peer's word that it is loading,
	// as often as it comes. The peer must not keep or change a value it
	// gave to reply.Answer.
	//
	// An error is for the request as a whole. One that wraps
	// errors.ErrUnsupported says the transport (or the peer, of an older
	// version) cannot carry this request: a request of many keys is then
	// sent again key by key, an OpPeek or OpOffer is taken as "not held",
	// and an OpSet, OpRemove or OpPurge names the peer in the write's
	// *UpdateError and is not retried (a read-only transport).
	Do(ctx context.Context, req PeerRequest, reply PeerReply) error

	// Addr names the peer, one address per peer (a transport's base URL,
	// say): UpdateError.Failed, PeerStats, logs and Tracer spans name it
	// so, and the background retries of a write find the peer again by it
	// in the peer set's list.
	Addr() string
}

// A PeerRequest is what one node asks of another about a group. What the
// peer does with it is ServePeer's to say; a transport carries every
// field.
type PeerRequest struct {
	Op    PeerOp
	Group string
	// Keys are the keys the request is about: one or more for OpGet,
	// OpPeek, OpRemove and OpOffer, exactly one for OpSet, none for
	// OpPurge. A transport splits a request over its limits into as many
	// requests as it needs, and gives each answer the key's index here.
	Keys []string
	// Value and TTL are an OpSet's value and lifetime (0: the peer's
	// group's default).
	Value []byte
	TTL   time.Duration
}

// A PeerOp is the kind of a PeerRequest.
type PeerOp uint8

const (
	// OpGet asks the owner of each key for its value: from memory, or
	// loaded with the peer's Getter. The peer never forwards it (one hop),
	// and says Loading while a load it waits for runs.
	OpGet PeerOp = iota + 1
	// OpPeek asks for each key from the peer's memory only: it never
	// loads or forwards, and answers ErrNotHeld for a key it does not hold
	// fresh. A key's new owner asks its previous owner so after the ring
	// changed (askPreviousOwner), and a group probes an ejected peer so.
	OpPeek
	// OpSet stores Value under Keys[0] in the peer's memory, which owns
	// the key (Group.Set).
	OpSet
	// OpRemove drops each key from the peer's memory (Group.Remove,
	// Group.RemoveMany, and Group.Set at the nodes other than the owner).
	OpRemove
	// OpPurge drops every key of the group from the peer's memory
	// (Group.Purge).
	OpPurge
	// OpOffer tells the peer that the asking node holds Keys, which the
	// peer owns now: the peer takes those it does not hold from their
	// previous owner under its own ring, with an OpPeek (Group.OfferKeys).
	// It carries names only, so no node can make another store a value of
	// its choosing.
	OpOffer
)

var opNames = [...]string{OpGet: "get", OpPeek: "peek", OpSet: "set", OpRemove: "remove", OpPurge: "purge", OpOffer: "offer"}

func (op PeerOp) String() string {
	if int(op) < len(opNames) && opNames[op] != "" {
		return opNames[op]
	}
	return fmt.Sprintf("PeerOp(%d)", uint8(op))
}

// A PeerReply receives a peer's answers to one PeerRequest. On the asking
// node the group implements it and the transport calls it; on the
// answering node the transport implements it and ServePeer calls it.
// Calls come from one goroutine at a time.
type PeerReply interface {
	// Answer gives the answer for req.Keys[i]: its value, or an error
	// that wraps getter.ErrNotFound (the key does not exist), ErrNotHeld
	// (OpPeek: not in memory), errors.ErrUnsupported (the key did not fit
	// in this request: ask for it alone) or says why it failed. ttl is
	// how long the value (or a "not found") stays fresh at the peer: 0
	// for no end, and negative when the transport does not carry it (the
	// asking group's TTL and NotFoundTTL apply then).
	Answer(i int, value ByteView, ttl time.Duration, err error)

	// Loading says the peer is alive and loading the request's keys. An
	// asking group waits for a peer that keeps saying so, however slow
	// its source, rather than loading the keys itself beside it. A
	// transport that cannot carry the sign never calls it; the asking
	// group then hedges after PeerPolicy.HedgeMax of silence.
	Loading()
}

// Errors of the peer contract.
var (
	// ErrNotHeld answers an OpPeek of a key the peer does not hold.
	ErrNotHeld = errors.New("key not held in memory")
	// ErrUnknownGroup is ServePeer's error for a group the node does not
	// have.
	ErrUnknownGroup = errors.New("no such group")
	// ErrBadRequest is ServePeer's error for a request that is not well
	// formed: an unknown Op, or keys that do not fit it.
	ErrBadRequest = errors.New("malformed peer request")
)

// peerDo is Do of peer, with a panic turned into a *PanicError: a peer's
// failure, not the caller's.
func peerDo(ctx context.Context, peer Peer, req PeerRequest, reply PeerReply) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return peer.Do(ctx, req, reply)
}

// oneKey is a request of one key and its PeerReply, in one allocation
// (none in a hedged fetch, which holds one and hears the signs).
type oneKey struct {
	keys [1]string
	a    keyAnswer
	got  bool
}

func (r *oneKey) Answer(i int, v ByteView, ttl time.Duration, err error) {
	if i != 0 || r.got {
		r.a = keyAnswer{err: fmt.Errorf("geecache: %w (answer %d of a one-key request)", errNotAnswered, i)}
		return
	}
	r.got, r.a = true, keyAnswer{v.b, ttl, err}
}

func (r *oneKey) Loading() {}

// get asks peer for r's key of group with op (OpGet or OpPeek), its
// answer going to reply (r, or what holds it).
func (r *oneKey) get(ctx context.Context, peer Peer, op PeerOp, group string, reply PeerReply) ([]byte, time.Duration, error) {
	err := peerDo(ctx, peer, PeerRequest{Op: op, Group: group, Keys: r.keys[:]}, reply)
	switch {
	case err != nil:
		return nil, 0, err
	case !r.got:
		return nil, 0, fmt.Errorf("geecache: peer %s: %w", peer.Addr(), errNotAnswered)
	}
	return r.a.v, r.a.ttl, r.a.err
}

// peerGet asks peer for key with op (OpGet or OpPeek).
func peerGet(ctx context.Context, peer Peer, op PeerOp, group, key string) ([]byte, time.Duration, error) {
	r := &oneKey{keys: [1]string{key}}
	return r.get(ctx, peer, op, group, r)
}

// manyKeys is the PeerReply of a request of many keys: each answer goes to
// each, each sign to alive (either may be nil).
type manyKeys struct {
	each  func(i int, v []byte, ttl time.Duration, err error)
	alive *hedgeTimer
}

func (r manyKeys) Answer(i int, v ByteView, ttl time.Duration, err error) {
	if r.each != nil {
		r.each(i, v.b, ttl, err)
	}
}

func (r manyKeys) Loading() {
	if r.alive != nil {
		r.alive.alive()
	}
}

// peerBatch sends req to peer, each answer to each and each sign to alive
// (either may be nil).
func peerBatch(ctx context.Context, peer Peer, req PeerRequest, alive *hedgeTimer, each func(i int, v []byte, ttl time.Duration, err error)) error {
	return peerDo(ctx, peer, req, manyKeys{each, alive})
}

// peerRemove drops key at peer.
func peerRemove(ctx context.Context, peer Peer, group, key string) error {
	return peerDo(ctx, peer, PeerRequest{Op: OpRemove, Group: group, Keys: []string{key}}, manyKeys{})
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
// previous owner (askPreviousOwner) follow these rules alike.
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
