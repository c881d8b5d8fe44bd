//go:build !js

package otel

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// tracedNode is a net/http node with a TracerProvider of its own, so that
// the spans each node records are told apart.
type tracedNode struct {
	pool  *nethttp.Pool
	group *cache.Group
	spans *tracetest.InMemoryExporter
}

// startTraced starts two nodes on OS-picked 127.0.0.1 ports, each tracing
// its group "g", with prop (nil for none) as both nodes' Propagator.
func startTraced(t *testing.T, prop *Propagator) [2]*tracedNode {
	t.Helper()
	var nodes [2]*tracedNode
	opts := &nethttptest.Options{Group: "g", Getter: func(int) getter.Getter { return getter.Func(source) }}
	if prop != nil {
		opts.PoolOptions.Propagator = prop
	}
	opts.PerNode = func(i int, o *cache.GroupOptions) {
		tp, exp := newTracing(t)
		tr, err := NewTracer(tp, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Tracer = tr
		nodes[i] = &tracedNode{spans: exp}
	}
	for i, n := range nethttptest.Start(t, 2, opts) {
		nodes[i].pool, nodes[i].group = n.Pool, n.Group
	}
	return nodes
}

// remoteKey returns a key that node 1 owns.
func remoteKey(t *testing.T, nodes [2]*tracedNode) string {
	t.Helper()
	for i := range 1000 {
		if k := fmt.Sprintf("key-%d", i); nodes[0].pool.Owner(k) == nodes[1].pool.Self() {
			return k
		}
	}
	t.Fatal("node 1 owns none of 1000 keys")
	return ""
}

// byName returns the one span named name among spans.
func byName(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %s among %d; want 1", len(found), name, len(spans))
	}
	return found[0]
}

func TestOneTraceCrossesNodes(t *testing.T) {
	nodes := startTraced(t, NewPropagator(nil))
	key := remoteKey(t, nodes)
	if _, err := nodes[0].group.Get(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	// The owner's spans ended before it answered, so both exporters are
	// complete now.
	client := nodes[0].spans.GetSpans()
	owner := nodes[1].spans.GetSpans()
	get := byName(t, client, spanGet)
	peer := byName(t, client, spanPeer)
	if v, _ := attr(peer.Attributes, peerKey); v.AsString() != nodes[1].pool.Self() {
		t.Errorf("peer span's %s = %q; want %q", peerKey, v.AsString(), nodes[1].pool.Self())
	}
	if v, _ := attr(peer.Attributes, "server.address"); v.AsString() != "127.0.0.1" {
		t.Errorf("peer span's server.address = %q; want 127.0.0.1", v.AsString())
	}
	load := byName(t, owner, spanLoad)
	served := byName(t, owner, spanGet)
	tid := get.SpanContext.TraceID()
	for _, s := range []tracetest.SpanStub{peer, served, load} {
		if s.SpanContext.TraceID() != tid {
			t.Errorf("span %s is in trace %s; want the asking Get's trace %s", s.Name, s.SpanContext.TraceID(), tid)
		}
	}
	if served.Parent.SpanID() != peer.SpanContext.SpanID() || !served.Parent.IsRemote() {
		t.Errorf("owner's Get span has parent %s (remote %v); want the peer span %s, remote",
			served.Parent.SpanID(), served.Parent.IsRemote(), peer.SpanContext.SpanID())
	}
	if load.Parent.SpanID() != served.SpanContext.SpanID() {
		t.Errorf("owner's load span has parent %s; want the owner's Get span %s", load.Parent.SpanID(), served.SpanContext.SpanID())
	}
}

// Without a Propagator the owner starts a trace of its own: the check
// above is not satisfied by accident.
func TestNoPropagatorNoSharedTrace(t *testing.T) {
	nodes := startTraced(t, nil)
	key := remoteKey(t, nodes)
	if _, err := nodes[0].group.Get(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	peer := byName(t, nodes[0].spans.GetSpans(), spanPeer)
	load := byName(t, nodes[1].spans.GetSpans(), spanLoad)
	if load.SpanContext.TraceID() == peer.SpanContext.TraceID() {
		t.Errorf("without a Propagator the owner's load joined trace %s", load.SpanContext.TraceID())
	}
}

func TestPropagatorRoundTrip(t *testing.T) {
	tid, _ := trace.TraceIDFromHex("0102030405060708090a0b0c0d0e0f10")
	sid, _ := trace.SpanIDFromHex("0102030405060708")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	m, err := baggage.NewMember("tenant", "acme")
	if err != nil {
		t.Fatal(err)
	}
	bag, err := baggage.New(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := baggage.ContextWithBaggage(trace.ContextWithSpanContext(context.Background(), sc), bag)

	p := NewPropagator(nil)
	h := http.Header{}
	p.Inject(ctx, h)
	if got := h.Get("Traceparent"); got != "00-0102030405060708090a0b0c0d0e0f10-0102030405060708-01" {
		t.Errorf("traceparent header %q", got)
	}
	out := p.Extract(context.Background(), h)
	if got := trace.SpanContextFromContext(out); got.TraceID() != tid || got.SpanID() != sid || !got.IsRemote() {
		t.Errorf("extracted %v; want trace %s span %s, remote", got, tid, sid)
	}
	if got := baggage.FromContext(out).Member("tenant").Value(); got != "acme" {
		t.Errorf("extracted baggage tenant=%q; want acme", got)
	}
	if got := trace.SpanContextFromContext(p.Extract(context.Background(), http.Header{})); got.IsValid() {
		t.Errorf("Extract of empty headers gave %v", got)
	}
}

func TestPropagatorTextMapOption(t *testing.T) {
	m, err := baggage.NewMember("tenant", "acme")
	if err != nil {
		t.Fatal(err)
	}
	bag, err := baggage.New(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := baggage.ContextWithBaggage(context.Background(), bag)
	h := http.Header{}
	NewPropagator(&PropagatorOptions{TextMap: propagation.TraceContext{}}).Inject(ctx, h)
	if got := h.Get("Baggage"); got != "" {
		t.Errorf("TraceContext alone injected baggage %q", got)
	}
	h = http.Header{}
	NewPropagator(nil).Inject(ctx, h)
	if got := h.Get("Baggage"); got != "tenant=acme" {
		t.Errorf("default propagator injected baggage %q; want tenant=acme", got)
	}
}
