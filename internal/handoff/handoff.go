// Package handoff carries one request between nodes: "answer from memory
// only". It links the core, which asks a key's previous owner for it after
// the ring changed (and probes an ejected peer with it), to the transports
// of this module, which send it as the protocol's memory-only request; an
// application never needs it.
//
// A Group passes a context from MemoryOnly to its PeerGetter; the
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
func MemoryOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, key{}, true)
}

// IsMemoryOnly reports whether ctx comes from MemoryOnly.
func IsMemoryOnly(ctx context.Context) bool {
	v, _ := ctx.Value(key{}).(bool)
	return v
}
