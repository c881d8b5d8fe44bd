//go:build !js

package otel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/adapters/lambda/lambdatest"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// TestOneTraceCrossesLambdaNodes runs two Lambda nodes in-process, each
// behind a Front (a Function URL stand-in) on an OS-picked 127.0.0.1 port,
// with a Propagator: the trace context crosses the Function URL event.
func TestOneTraceCrossesLambdaNodes(t *testing.T) {
	var lns [2]net.Listener
	var urls []string
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ln
		urls = append(urls, "http://"+ln.Addr().String())
	}
	var nodes [2]*lambda.Node
	var groups [2]*cache.Group
	var spans [2]*tracetest.InMemoryExporter
	for i := range nodes {
		tp, exp := newTracing(t)
		spans[i] = exp
		tr, err := NewTracer(tp, nil)
		if err != nil {
			t.Fatal(err)
		}
		setup := func(cfg lambda.Config, reg *cache.Registry, peers cache.PeerPicker) error {
			groups[i] = newGroup(t, reg, "g", tr, peers)
			return nil
		}
		cfg := lambda.Config{SelfURL: urls[i], Peers: urls, Cluster: nethttp.Cluster{Secret: []byte("k")}, CacheBytes: 1 << 20}
		nodes[i], err = lambda.NewNode(cfg, setup, &lambda.Options{Logger: quiet,
			Peers: lambda.PeerOptions{Propagator: NewPropagator(nil), Timeout: 10 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		serveLambda(t, lns[i], nodes[i])
	}
	var key string
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("key-%d", i); nodes[0].Peers.Owner(k) == nodes[1].Config.SelfURL {
			key = k
		} else if i > 1000 {
			t.Fatal("node 1 owns none of 1000 keys")
		}
	}
	if _, err := groups[0].Get(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	peer := byName(t, spans[0].GetSpans(), spanPeer)
	served := byName(t, spans[1].GetSpans(), spanGet)
	load := byName(t, spans[1].GetSpans(), spanLoad)
	if load.SpanContext.TraceID() != peer.SpanContext.TraceID() {
		t.Errorf("owner's load is in trace %s; want the asking node's trace %s", load.SpanContext.TraceID(), peer.SpanContext.TraceID())
	}
	if served.Parent.SpanID() != peer.SpanContext.SpanID() {
		t.Errorf("owner's Get span has parent %s; want the peer span %s", served.Parent.SpanID(), peer.SpanContext.SpanID())
	}
}

// serveLambda serves n on ln as a Function URL does, in-process: a Front
// invoking n's Handler through the Lambda runtime's JSON path.
func serveLambda(t *testing.T, ln net.Listener, n *lambda.Node) {
	t.Helper()
	rt, endpoint := lambdatest.NewRuntime(awslambda.NewHandler(n.ServeURL).Invoke)
	f, err := lambdatest.NewFront([]string{endpoint}, &lambdatest.FrontOptions{Logger: quiet, InvokeTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("front: %v", err)
		}
		f.Close()
		rt.Close()
		n.Close()
	})
}
