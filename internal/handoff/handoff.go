// Package handoff carries one request between nodes: "answer from memory
// only". It links the core, which asks a key's previous owner for it after
// the ring changed (and probes an ejected peer with it), to the transports
// of this module, which send it as the protocol's memory-only request; an
// application never needs it. Offer marks a group's offer of keys to its
// Peer alike. (The handover itself, and the taking of an offer, are
// calls, not marks: see package groupbridge.)
//
// A Group passes a context from MemoryOnly to its Peer; the
// protocol's client marks the request (X-Geecache-Peer: memory), and the
// serving binding passes a context from MemoryOnly to Group.GetLocal, which
// then answers from memory, or with ErrNotHeld, and never loads or
// forwards.
package handoff

import (
	"context"
	"errors"
)

// ErrNotHeld is the answer to a memory-only request for a key the node
// does not hold (fresh) in memory.
var ErrNotHeld = errors.New("key not held in memory")

type key struct{}

// MemoryOnly returns a context that asks for an answer from memory only.
// It is not an offer (see Offer), even if ctx is: a node taking an offer
// asks with a context made from the offer's.
func MemoryOnly(ctx context.Context) context.Context {
	if IsOffer(ctx) {
		ctx = context.WithValue(ctx, offerKey{}, false)
	}
	return context.WithValue(ctx, key{}, true)
}

// IsMemoryOnly reports whether ctx comes from MemoryOnly.
func IsMemoryOnly(ctx context.Context) bool {
	v, _ := ctx.Value(key{}).(bool)
	return v
}

// The handover of keys from one node to another (see PROTOCOL.md,
// "Handover"): a node whose ring moved keys it holds to other nodes (or
// that leaves) offers them, by name, to their owners; an owner takes the
// keys it owns and does not hold from their previous owner, from its
// memory only. An offer carries names, never values, so that no caller can
// make a node store a value it chose.

type offerKey struct{}

// Offer returns a context that marks a peer batch as an offer of its keys:
// the client sends their names only (the protocol's !offer), and the
// serving node's binding has its group take those it owns over from their
// previous owner (groupbridge.TakeOffer). The mark is the group's word to
// its Peer, which it asks with Batch; a group does not read it.
func Offer(ctx context.Context) context.Context {
	return context.WithValue(ctx, offerKey{}, true)
}

// IsOffer reports whether ctx comes from Offer.
func IsOffer(ctx context.Context) bool {
	v, _ := ctx.Value(offerKey{}).(bool)
	return v
}
