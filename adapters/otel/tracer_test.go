package otel

import (
	"context"
	"errors"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/geecache/geecache/cache"
)

// getSpans runs Get(key) on a fresh traced group (after the Gets of warm)
// and returns the spans of that Get alone, in the order they ended.
func getSpans(t *testing.T, opts *TracerOptions, peers *remote, warm []string, key string) (tracetest.SpanStubs, error) {
	t.Helper()
	tp, exp := newTracing(t)
	tr, err := NewTracer(tp, opts)
	if err != nil {
		t.Fatal(err)
	}
	var pp cache.PeerPicker
	if peers != nil {
		pp = peers
	}
	g := newGroup(t, nil, "g", tr, pp)
	for _, k := range warm {
		if _, err := g.Get(context.Background(), k); err != nil {
			t.Fatalf("warm Get(%q): %v", k, err)
		}
	}
	exp.Reset()
	_, err = g.Get(context.Background(), key)
	return exp.GetSpans(), err
}

// checkTree checks that spans (in the order they ended) are the wanted
// descriptions, that the last is the root and the others its children, and
// that all share one trace.
func checkTree(t *testing.T, spans tracetest.SpanStubs, want ...string) {
	t.Helper()
	if len(spans) != len(want) {
		var got []string
		for _, s := range spans {
			got = append(got, describe(s))
		}
		t.Fatalf("got %d spans %q; want %q", len(spans), got, want)
	}
	root := spans[len(spans)-1]
	if root.Parent.IsValid() {
		t.Errorf("root span %s has a parent", root.Name)
	}
	for i, s := range spans {
		if got := describe(s); got != want[i] {
			t.Errorf("span %d = %q; want %q", i, got, want[i])
		}
		if i < len(spans)-1 && s.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("span %s's parent is %s; want the root %s", s.Name, s.Parent.SpanID(), root.SpanContext.SpanID())
		}
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("span %s is in trace %s; want %s", s.Name, s.SpanContext.TraceID(), root.SpanContext.TraceID())
		}
	}
}

func TestTracerHit(t *testing.T) {
	spans, err := getSpans(t, nil, nil, []string{"a"}, "a")
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, spans, "geecache.Get internal geecache.group=g geecache.hit=true status=Unset")
}

func TestTracerMissAndLoad(t *testing.T) {
	spans, err := getSpans(t, nil, nil, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, spans,
		"geecache.load internal geecache.group=g status=Unset",
		"geecache.Get internal geecache.group=g geecache.hit=false status=Unset")
}

func TestTracerRecordKeys(t *testing.T) {
	spans, err := getSpans(t, &TracerOptions{RecordKeys: true}, nil, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, spans,
		"geecache.load internal geecache.group=g geecache.key=a status=Unset",
		"geecache.Get internal geecache.group=g geecache.key=a geecache.hit=false status=Unset")
}

func TestTracerNotFoundIsNoError(t *testing.T) {
	spans, err := getSpans(t, nil, nil, nil, "missing-1")
	if err == nil {
		t.Fatal("Get of a missing key succeeded")
	}
	checkTree(t, spans,
		"geecache.load internal geecache.group=g geecache.found=false status=Unset",
		"geecache.Get internal geecache.group=g geecache.hit=false geecache.found=false status=Unset")
	for _, s := range spans {
		if len(s.Events) != 0 {
			t.Errorf("span %s recorded events %v for a missing key", s.Name, s.Events)
		}
	}
}

func TestTracerLoadError(t *testing.T) {
	spans, err := getSpans(t, nil, nil, nil, "fail-1")
	if !errors.Is(err, errSource) {
		t.Fatalf("Get = %v; want errSource", err)
	}
	checkTree(t, spans,
		"geecache.load internal geecache.group=g status=Error",
		"geecache.Get internal geecache.group=g geecache.hit=false status=Error")
	for _, s := range spans {
		if len(s.Events) != 1 || s.Events[0].Name != "exception" {
			t.Errorf("span %s events %v; want one exception", s.Name, s.Events)
		}
		if s.Status.Description == "" {
			t.Errorf("span %s has an Error status without a description", s.Name)
		}
	}
}

func TestTracerPeer(t *testing.T) {
	spans, err := getSpans(t, nil, &remote{addr: "http://10.0.0.2:8001"}, nil, "remote-1")
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, spans,
		"geecache.peer client geecache.group=g geecache.peer=http://10.0.0.2:8001 server.address=10.0.0.2 server.port=8001 status=Unset",
		"geecache.Get internal geecache.group=g geecache.hit=false status=Unset")
}

// A Lambda peer named by ARN (lambda.Peers' Addr) has no host and port:
// its span names it in geecache.peer only, with no server.address of
// "arn:aws:lambda:REGION:ACCOUNT:function" (the same for every function)
// and no version number as server.port.
func TestTracerPeerNamedByARN(t *testing.T) {
	arn := "arn:aws:lambda:us-east-1:123456789012:function:geecache-b:7"
	spans, err := getSpans(t, nil, &remote{addr: arn}, nil, "remote-1")
	if err != nil {
		t.Fatal(err)
	}
	checkTree(t, spans,
		"geecache.peer client geecache.group=g geecache.peer="+arn+" status=Unset",
		"geecache.Get internal geecache.group=g geecache.hit=false status=Unset")
}

// A peer named like host:port whose host is no network host (a Lambda
// function's name with its version, "name:7") is reported whole, in
// geecache.peer, with no server.address "name" and no server.port 7; a
// host:port of a network address, without a scheme, is split as a URL is.
func TestTracerPeerNameIsNotHostPort(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"name:7", "geecache.peer=name:7"},
		{"geecache-b:prod", "geecache.peer=geecache-b:prod"},
		{"10.0.0.2:8001", "geecache.peer=10.0.0.2:8001 server.address=10.0.0.2 server.port=8001"},
		{"cache-1.example.com:8001", "geecache.peer=cache-1.example.com:8001 server.address=cache-1.example.com server.port=8001"},
	} {
		spans, err := getSpans(t, nil, &remote{addr: c.addr}, nil, "remote-1")
		if err != nil {
			t.Fatal(err)
		}
		checkTree(t, spans,
			"geecache.peer client geecache.group=g "+c.want+" status=Unset",
			"geecache.Get internal geecache.group=g geecache.hit=false status=Unset")
	}
}

func TestTracerFallback(t *testing.T) {
	peer := &remote{addr: "https://[::1]/cache", err: errors.New("connection refused")}
	spans, err := getSpans(t, nil, peer, nil, "remote-1")
	if err != nil {
		t.Fatalf("Get after a failed peer = %v; want the fallback's value", err)
	}
	// The fallback load runs after the peer span ended, both under the
	// Get; the Get succeeds.
	checkTree(t, spans,
		"geecache.peer client geecache.group=g geecache.peer=https://[::1]/cache server.address=::1 server.port=443 status=Error",
		"geecache.fallback internal geecache.group=g status=Unset",
		"geecache.Get internal geecache.group=g geecache.hit=false status=Unset")
}

func TestTracerUnsampled(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.NeverSample()))
	defer tp.Shutdown(context.Background())
	tr, err := NewTracer(tp, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sc trace.SpanContext
	g := newGroup(t, nil, "g", tr, nil)
	ctx, s := tr.Start(context.Background(), "miss", "g", "k", "")
	sc = trace.SpanContextFromContext(ctx)
	s.End(errSource)
	if !sc.IsValid() || sc.IsSampled() {
		t.Errorf("unsampled span context %v; want valid and not sampled, to propagate", sc)
	}
	for _, k := range []string{"a", "a", "missing"} {
		_, _ = g.Get(context.Background(), k)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans exported with NeverSample", n)
	}
}

func TestNewTracerRefusesNil(t *testing.T) {
	_, err := NewTracer(nil, nil)
	wantConfigErr(t, "NewTracer(nil)", err)
}

func TestHostPort(t *testing.T) {
	for _, c := range []struct {
		in   string
		host string
		port int
	}{
		{"http://10.0.0.1:8001", "10.0.0.1", 8001},
		{"http://h", "h", 80},
		{"https://h/base", "h", 443},
		{"HTTPS://h", "h", 443},
		{"http://[::1]:9", "::1", 9},
		{"https://[fe80::1]", "fe80::1", 443},
		{"http://u:p@h:7/x?y#z", "h", 7},
		{"ftp://h", "h", 0},
		{"http://name:7", "name", 7}, // a URL names a network host
		{"", "", 0},
		// Without a scheme, host:port of a network address: an IP address,
		// localhost, or a DNS name with a dot.
		{"10.0.0.1:8001", "10.0.0.1", 8001},
		{"[::1]:9", "::1", 9},
		{"[fe80::1]", "fe80::1", 0},
		{"localhost:8001", "localhost", 8001},
		{"cache-1.example.com:8001", "cache-1.example.com", 8001},
		{"10.0.0.1", "10.0.0.1", 0},
		// Anything else is a peer's name, not host:port: a Lambda function's
		// name, with a version or an alias, or a name that only looks so.
		{"name:7", "", 0},
		{"h:12", "", 0},
		{"geecache-b:prod", "", 0},
		{"geecache-b:$LATEST", "", 0},
		{"geecache-b", "", 0},
		{"10.0.0.1:0", "", 0},
		{"10.0.0.1:65536", "", 0},
		{"10.0.0.1:8001/cache", "", 0},
		{"cache.example.com:http", "", 0},
		{"example..com:80", "", 0},
		// A Lambda peer named by ARN (lambda.Peers' Addr) is no host:port:
		// its last colon is not a port's.
		{"arn:aws:lambda:us-east-1:123456789012:function:geecache-b", "", 0},
		{"arn:aws:lambda:us-east-1:123456789012:function:geecache-b:7", "", 0},
	} {
		if h, p := hostPort(c.in); h != c.host || p != c.port {
			t.Errorf("hostPort(%q) = %q, %d; want %q, %d", c.in, h, p, c.host, c.port)
		}
	}
	if n := testing.AllocsPerRun(100, func() { hostPort("http://[::1]:8001/cache") }); n != 0 {
		t.Errorf("hostPort allocates %v times", n)
	}
}
