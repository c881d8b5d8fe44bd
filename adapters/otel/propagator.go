package otel

import (
	"context"

	"go.opentelemetry.io/otel/propagation"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// PropagatorOptions configures NewPropagator. A nil *PropagatorOptions
// means all defaults.
type PropagatorOptions struct {
	// TextMap does the work. Nil (the default) means W3C Trace Context
	// and W3C Baggage (the traceparent, tracestate and baggage headers).
	// Pass otel.GetTextMapPropagator() to follow the process's global
	// setting, including one made later.
	TextMap propagation.TextMapPropagator
}

// A Propagator is a protocol.Propagator that carries OpenTelemetry context
// (the current span's trace, and baggage) in the headers of peer requests,
// so that the spans an owner node records for a request join the trace of
// the node that asked. Give the same kind of Propagator to every node
// (nethttp.PoolOptions.Propagator, or the Peers options of a Lambda node),
// and a Tracer to their groups. It is safe for concurrent use.
type Propagator struct {
	tm propagation.TextMapPropagator
}

var _ protocol.Propagator = (*Propagator)(nil)

// NewPropagator returns a Propagator.
func NewPropagator(opts *PropagatorOptions) *Propagator {
	var o PropagatorOptions
	if opts != nil {
		o = *opts
	}
	if o.TextMap == nil {
		o.TextMap = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	return &Propagator{tm: o.TextMap}
}

// Inject writes the trace context and baggage of ctx into h. The header
// type is net/http's Header (protocol.Header is an alias of it) in every
// build but GOOS=js, where the protocol has a header type of its own so
// that a js node links no net/http; one declaration serves both.
func (p *Propagator) Inject(ctx context.Context, h protocol.Header) {
	p.tm.Inject(ctx, propagation.HeaderCarrier(h))
}

// Extract returns ctx with the trace context and baggage that h carries:
// the remote span becomes the parent of the spans started with it.
func (p *Propagator) Extract(ctx context.Context, h protocol.Header) context.Context {
	return p.tm.Extract(ctx, propagation.HeaderCarrier(h))
}
