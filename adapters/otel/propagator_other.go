//go:build !js

package otel

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// Inject writes the trace context and baggage of ctx into h.
func (p *Propagator) Inject(ctx context.Context, h http.Header) {
	p.tm.Inject(ctx, propagation.HeaderCarrier(h))
}

// Extract returns ctx with the trace context and baggage that h carries:
// the remote span becomes the parent of the spans started with it.
func (p *Propagator) Extract(ctx context.Context, h http.Header) context.Context {
	return p.tm.Extract(ctx, propagation.HeaderCarrier(h))
}
