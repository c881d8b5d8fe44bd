//go:build js

package otel

import (
	"context"

	"go.opentelemetry.io/otel/propagation"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// Inject writes the trace context and baggage of ctx into h (under
// GOOS=js, a protocol.Header: net/http's Header elsewhere).
func (p *Propagator) Inject(ctx context.Context, h protocol.Header) {
	p.tm.Inject(ctx, propagation.HeaderCarrier(h))
}

// Extract returns ctx with the trace context and baggage that h carries:
// the remote span becomes the parent of the spans started with it.
func (p *Propagator) Extract(ctx context.Context, h protocol.Header) context.Context {
	return p.tm.Extract(ctx, propagation.HeaderCarrier(h))
}
