// Package batchctx marks the context of a peer's batch request, so that a
// transport's server can have a group answer it from this node alone:
// Group.GetMany then never forwards (as GetLocal does not) and reports each
// key's remaining lifetime, and Group.RemoveMany and Group.Purge change
// this node only, without telling the other peers again.
package batchctx

import (
	"context"
	"time"
)

type key struct{}

// Local is what a marked context carries: TTL, if not nil, is called by
// GetMany with each key's index and how long its value (or its "not
// found") stays fresh here, before the key's result is handed on. The
// keys of a marked GetMany may share one string (the protocol decodes a
// batch's keys so): GetMany copies each key it keeps past the call (one it
// loads, or refreshes), and the caller keeps none past its each.
type Local struct {
	TTL func(i int, ttl time.Duration)
}

// With returns ctx marked as a peer's batch request.
func With(ctx context.Context, l *Local) context.Context {
	return context.WithValue(ctx, key{}, l)
}

// From returns the mark of ctx, or nil if it has none.
func From(ctx context.Context) *Local {
	l, _ := ctx.Value(key{}).(*Local)
	return l
}
