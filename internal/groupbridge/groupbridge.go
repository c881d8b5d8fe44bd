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

// A Bridge holds the handover functions of a group of type G (a
// *cache.Group) for HandOver and TakeOffer. It is embedded in cache.Group
// under an unexported name. It is generic in G so that the functions are
// the group's methods as they are (method expressions, which take the
// group), not closures over each group, and HandOver's call is static:
// no allocation per group, and no interface whose method the linker
// would keep in every type that has it (the js node's size,
// examples/wasm's TestWasmNodeSize).
type Bridge[G any] struct {
	handOver  func(g G, ctx context.Context)
	takeOffer func(g G, ctx context.Context, keys []string)
}

// New returns the Bridge that gives handOver to HandOver and takeOffer to
// TakeOffer.
func New[G any](handOver func(g G, ctx context.Context), takeOffer func(g G, ctx context.Context, keys []string)) Bridge[G] {
	return Bridge[G]{handOver: handOver, takeOffer: takeOffer}
}

// bridge is what HandOver and TakeOffer look for.
func (b *Bridge[G]) bridge() *Bridge[G] { return b }

// group is a pointer to a value whose type embeds a Bridge[G], G being
// that pointer's type: a *cache.Group.
type group[G any] interface{ bridge() *Bridge[G] }

// HandOver offers the keys that g holds as their owner but another node
// owns now (every key, on a node that leaves) to those nodes, the most
// used first, and returns when every key was offered or when ctx ends. A
// transport calls it when its ring changed and when its node leaves.
func HandOver[G group[G]](ctx context.Context, g G) {
	if f := g.bridge().handOver; f != nil {
		f(g, ctx)
	}
}

// TakeOffer has g take the keys of a peer's offer (names only: the
// protocol's !offer) that it owns from their previous owner under its own
// ring, from that node's memory; it returns when the pulls end, or when
// ctx (the offer's request) ends.
func TakeOffer[G group[G]](ctx context.Context, g G, keys []string) {
	if f := g.bridge().takeOffer; f != nil {
		f(g, ctx, keys)
	}
}
