package otel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/peertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.DiscardHandler)

// wantConfigErr fails t unless err wraps cache.ErrConfig and says
// "geecache: " exactly once at its start, as every constructor's
// configuration error in the main module does.
func wantConfigErr(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, cache.ErrConfig) {
		t.Errorf("%s: err = %v, want one wrapping cache.ErrConfig", what, err)
		return
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "geecache: ") || strings.Count(msg, "geecache: ") != 1 {
		t.Errorf("%s: err %q does not start with exactly one \"geecache: \"", what, msg)
	}
}

// errSource is the Getter's error for keys starting with "fail".
var errSource = errors.New("source down")

// source answers "v:"+key, not found for keys starting with "missing",
// and errSource for keys starting with "fail".
func source(_ context.Context, key string) ([]byte, error) {
	switch {
	case strings.HasPrefix(key, "missing"):
		return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
	case strings.HasPrefix(key, "fail"):
		return nil, errSource
	}
	return []byte("v:" + key), nil
}

// remote is a Peer at addr that owns the keys starting with
// "remote"; it answers "r:"+key, or fails with err.
type remote struct {
	addr string
	err  error
}

func (r *remote) Addr() string { return r.addr }

func (r *remote) Do(_ context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return peertest.Fetch(req, reply, func(key string) ([]byte, time.Duration, error) {
		if r.err != nil {
			return nil, 0, r.err
		}
		return []byte("r:" + key), -1, nil
	})
}

func (r *remote) PickPeer(key string) (cache.Peer, bool) {
	if strings.HasPrefix(key, "remote") {
		return r, true
	}
	return nil, false
}

// newTracing returns a TracerProvider that exports every span, as it
// ends, to the returned exporter.
func newTracing(t testing.TB) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

// newGroup returns a group "g" of a new registry, traced by tr (nil for
// none), with peers (nil for none).
func newGroup(t testing.TB, reg *cache.Registry, name string, tr cache.Tracer, peers cache.PeerPicker) *cache.Group {
	t.Helper()
	if reg == nil {
		reg = cache.NewRegistry()
	}
	g, err := reg.NewGroup(name, 1<<20, getter.Func(source), &cache.GroupOptions{Tracer: tr, Peers: peers, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// attr returns the value of key among kvs, and whether it is there.
func attr(kvs []attribute.KeyValue, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// describe renders a span for failure messages and comparisons: its name,
// its kind, and the attributes and status this package sets.
func describe(s tracetest.SpanStub) string {
	var b strings.Builder
	b.WriteString(s.Name)
	b.WriteString(" " + s.SpanKind.String())
	for _, k := range []attribute.Key{groupKey, keyKey, hitKey, peerKey, "server.address", "server.port", foundKey} {
		if v, ok := attr(s.Attributes, k); ok {
			fmt.Fprintf(&b, " %s=%s", k, v.String())
		}
	}
	fmt.Fprintf(&b, " status=%s", s.Status.Code)
	return b.String()
}

// discard is a cache.PeerReply that drops the answers.
type discard struct{}

func (discard) Answer(int, cache.ByteView, time.Duration, error) {}
func (discard) Loading()                                         {}
