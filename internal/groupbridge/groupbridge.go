// Package groupbridge joins the transports of this module to the part of
// a cache.Group that an application never calls: the handover of keys
// between nodes (adapters/PROTOCOL.md, "Handover"). A transport starts a
// group's handover when its ring changes and when its node leaves
// (HandOver), and its server hands a peer's offer of keys to the group
// (TakeOffer). A Group embeds a Bridge under an unexported name (so that it
// adds nothing to Group's exported surface), which holds the group's own
// functions; HandOver and TakeOffer reach them through a method no package
// outside this one can call, as hostserve joins package wasmjs to a
// nethttp.Pool. An application never meets this package.
package groupbridge

import "context"

// A Bridge holds a group's handover functions for HandOver and TakeOffer.
// It is embedded in cache.Group under an unexported name.
type Bridge struct {
	handOver  func(ctx context.Context)
	takeOffer func(ctx context.Context, keys []string)
}

// New returns the Bridge that gives handOver to HandOver and takeOffer to
// TakeOffer.
func New(handOver func(ctx context.Context), takeOffer func(ctx context.Context, keys []string)) Bridge {
	return Bridge{handOver: handOver, takeOffer: takeOffer}
}

// bridge is what HandOver and TakeOffer look for.
func (b Bridge) bridge() Bridge { return b }

// group is a value whose type embeds a Bridge: a *cache.Group.
type group interface{ bridge() Bridge }

// HandOver offers the keys that g holds as their owner but another node
// owns now (every key, on a node that leaves) to those nodes, the most
// used first, and returns when every key was offered or when ctx ends. A
// transport calls it when its ring changed and when its node leaves.
func HandOver(ctx context.Context, g group) {
	if f := g.bridge().handOver; f != nil {
		f(ctx)
	}
}

// TakeOffer has g take the keys of a peer's offer (names only: the
// protocol's !offer) that it owns from their previous owner under its own
// ring, from that node's memory; it returns when the pulls end, or when
// ctx (the offer's request) ends.
func TakeOffer(ctx context.Context, g group, keys []string) {
	if f := g.bridge().takeOffer; f != nil {
		f(ctx, keys)
	}
}
