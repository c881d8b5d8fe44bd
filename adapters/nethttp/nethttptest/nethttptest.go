//go:build !js

// Package nethttptest starts a GeeCache cluster of net/http nodes inside
// one test: n nodes on 127.0.0.1, on ports the OS picks, that all know each
// other, with a fault that can be injected into each node (hung, slow,
// lying, down, partitioned). It keeps no state outside the clusters it
// starts, so parallel tests each get their own; t.Cleanup stops every node
// and waits for its goroutines, so goleak passes. Not built for GOOS=js:
// a js node has no server of its own (the JavaScript host listens).
//
// It exists because a Pool needs its own URL before its server exists:
// Start listens first, then builds each node on the address it got. The
// caller gives each node its source and its group and pool options; the
// nodes talk to each other over net/http.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/testing.md
package nethttptest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Options configures a test cluster. Every field may be left zero.
type Options struct {
	// Group is the name of the one group every node serves
	// (default "scores").
	Group string
	// CacheBytes is each node's cache size (default 1 MiB).
	CacheBytes int64
	// Getter returns node i's source. The default answers "v:"+key,
	// and getter.ErrNotFound for a key that begins with "missing".
	Getter func(i int) getter.Getter
	// GroupOptions are each node's group options; Peers is set to the
	// node's Pool, and a nil Logger discards.
	GroupOptions cache.GroupOptions
	// PerNode, if set, is called with node i's copy of GroupOptions
	// before its group is made, for what differs between nodes (a Tracer
	// of each node's own, for example).
	PerNode func(i int, o *cache.GroupOptions)
	// PoolOptions are each node's Pool options; a nil Logger discards.
	// A Transport given here is wrapped (to cut partitioned nodes off);
	// without one the nodes share one from nethttp.NewTransport,
	// whose connections Cleanup closes.
	PoolOptions nethttp.PoolOptions
}

// Fault is what a node does wrong. The zero Fault is a healthy node.
type Fault struct {
	// Hang accepts each request and never answers it: the client's
	// context, timeout or hedge has to end it. A request the node was
	// serving when it began to hang stops too, as in a stopped process:
	// its 102s and its answer wait until the fault is cleared.
	Hang bool
	// Delay answers each request after this long (a slow node).
	Delay time.Duration
	// Lie answers every request (a Get, a Remove, a Set) with 200 and
	// a wrong value, without the checksum a node sends: a client reports
	// cache.ErrIntegrity and never returns the value.
	Lie bool
	// Down closes the node's listener and connections, as a crash
	// would: its peers' connections are refused. Clearing it listens on
	// the same address again.
	Down bool
	// Partitioned cuts the node off from the others, both ways (their
	// requests to it and its requests to them fail at once), while it
	// still serves its own Gets and any client outside the cluster.
	Partitioned bool
}

// Node is one node of a test cluster.
type Node struct {
	// Addr is the node's URL, "http://127.0.0.1:port".
	Addr     string
	Registry *cache.Registry
	Pool     *nethttp.Pool
	Group    *cache.Group

	t        testing.TB
	byHost   map[string]*Node // the cluster's nodes, by host:port
	faulty   *atomic.Int32    // the cluster's nodes with a fault (shared)
	fault    atomic.Pointer[Fault]
	hangMu   sync.Mutex
	hung     chan struct{} // not nil while the node hangs; closed when it stops
	stop     chan struct{} // closed by Cleanup: ends hung requests
	reqs     sync.WaitGroup
	reqMu    sync.Mutex // guards stopping and reqs' Add (not mu: SetFault holds that long)
	stopping bool       // shutdown has begun: no request starts
	mu       sync.Mutex // guards srv, done and closed
	srv      *http.Server
	done     chan struct{} // closed when srv's Serve returns
	closed   bool
}

// Start starts n nodes that all know each other (each node's Pool is Set
// to every node's Addr, in the order returned) and returns them. opts may
// be nil. t.Cleanup stops them; a test may call Pool.Set itself to change
// who is in the ring.
func Start(t testing.TB, n int, opts *Options) []*Node {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Group == "" {
		o.Group = "scores"
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = 1 << 20
	}
	if o.Getter == nil {
		o.Getter = func(int) getter.Getter { return getter.Func(answer) }
	}
	quiet := slog.New(slog.DiscardHandler)
	base := o.PoolOptions.Transport
	var own *http.Transport
	if base == nil {
		own = nethttp.NewTransport()
		base = own
	}
	nodes := make([]*Node, n)
	byHost := make(map[string]*Node, n)
	faulty := new(atomic.Int32)
	addrs := make([]string, n)
	lns := make([]net.Listener, n)
	for i := range nodes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i], addrs[i] = ln, "http://"+ln.Addr().String()
		nodes[i] = &Node{Addr: addrs[i], t: t, stop: make(chan struct{}), faulty: faulty}
		byHost[ln.Addr().String()] = nodes[i]
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.shutdown()
		}
		if own != nil {
			own.CloseIdleConnections()
		}
	})
	for i, nd := range nodes {
		nd.Registry = cache.NewRegistry()
		po := o.PoolOptions
		if po.Logger == nil {
			po.Logger = quiet
		}
		po.Transport = &partition{from: nd, byHost: byHost, base: base}
		var err error
		if nd.Pool, err = nethttp.NewPool(nd.Addr, nd.Registry, &po); err != nil {
			t.Fatal(err)
		}
		if err := nd.Pool.Set(addrs...); err != nil {
			t.Fatal(err)
		}
		gopts := o.GroupOptions
		gopts.Peers = nd.Pool
		if gopts.Logger == nil {
			gopts.Logger = quiet
		}
		if o.PerNode != nil {
			o.PerNode(i, &gopts)
		}
		if nd.Group, err = nd.Registry.NewGroup(o.Group, o.CacheBytes, o.Getter(i), &gopts); err != nil {
			t.Fatal(err)
		}
		nd.byHost = byHost
		nd.serve(lns[i])
	}
	return nodes
}

// answer is the default source.
func answer(_ context.Context, key string) ([]byte, error) {
	if strings.HasPrefix(key, "missing") {
		return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
	}
	return []byte("v:" + key), nil
}

// serve starts serving ln. The caller holds no lock.
func (n *Node) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(n.handle)}
	done := make(chan struct{})
	n.srv, n.done = srv, done
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			n.t.Errorf("nethttptest: serve %s: %v", n.Addr, err)
		}
	}()
}

func (n *Node) handle(w http.ResponseWriter, r *http.Request) {
	// A request that reaches the node as it stops (its server's Close
	// does not wait for handlers) is refused, so that shutdown's wait for
	// the node's requests never sees one start beside it (a WaitGroup's
	// Add from zero must happen before its Wait: -race reported it in
	// TestWritesToBadPeers) and no request reaches the Pool it closes.
	n.reqMu.Lock()
	if n.stopping {
		n.reqMu.Unlock()
		http.Error(w, "nethttptest: node stopped", http.StatusServiceUnavailable)
		return
	}
	n.reqs.Add(1)
	n.reqMu.Unlock()
	defer n.reqs.Done()
	if n.faulty.Load() > 0 && strings.EqualFold(r.Header.Get("Upgrade"), muxUpgrade) {
		// The frames of a multiplexed connection would not pass here, so
		// no fault could act on them: while a node of the cluster has one,
		// "not spoken here", and the peer asks over HTTP/1.1.
		http.Error(w, "nethttptest: no multiplexing while a node has a fault", http.StatusBadRequest)
		return
	}
	f := n.fault.Load()
	if f == nil {
		n.Pool.ServeHTTP(&holding{ResponseWriter: w, n: n, ctx: r.Context()}, r)
		return
	}
	if f.Hang {
		select {
		case <-r.Context().Done():
		case <-n.stop:
		}
		return
	}
	if f.Delay > 0 {
		tm := time.NewTimer(f.Delay)
		defer tm.Stop()
		select {
		case <-tm.C:
		case <-r.Context().Done():
			return
		case <-n.stop:
			return
		}
	}
	if f.Lie {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte("a lie"))
		return
	}
	n.Pool.ServeHTTP(&holding{ResponseWriter: w, n: n, ctx: r.Context()}, r)
}

// holdWhileHung waits while the node hangs, until the request's ctx ends
// or the node stops.
func (n *Node) holdWhileHung(ctx context.Context) {
	n.hangMu.Lock()
	c := n.hung
	n.hangMu.Unlock()
	if c == nil {
		return
	}
	select {
	case <-c:
	case <-ctx.Done():
	case <-n.stop:
	}
}

// holding is the ResponseWriter of a request the node serves: each write
// (a 102, the answer) waits while the node hangs.
type holding struct {
	http.ResponseWriter
	n   *Node
	ctx context.Context
}

func (h *holding) WriteHeader(code int) {
	h.n.holdWhileHung(h.ctx)
	h.ResponseWriter.WriteHeader(code)
}

func (h *holding) Write(b []byte) (int, error) {
	h.n.holdWhileHung(h.ctx)
	return h.ResponseWriter.Write(b)
}

func (h *holding) Flush() {
	h.n.holdWhileHung(h.ctx)
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the server's ResponseWriter
// (to hijack a multiplexed connection, or set a deadline).
func (h *holding) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// Owner returns the node that owns key by this node's ring, or nil if no
// node of the cluster does.
func (n *Node) Owner(key string) *Node {
	return n.byHost[strings.TrimPrefix(n.Pool.Owner(key), "http://")]
}

// SetFault sets the node's fault (the zero Fault clears it); it is safe to
// call from any goroutine. Under PoolOptions.Multiplex, setting a fault
// ends the cluster's multiplexed connections and, while any node has one,
// the nodes ask each other over HTTP/1.1, where the fault acts on every
// request.
func (n *Node) SetFault(f Fault) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hangMu.Lock()
	switch {
	case f.Hang && n.hung == nil:
		n.hung = make(chan struct{})
	case !f.Hang && n.hung != nil:
		close(n.hung)
		n.hung = nil
	}
	n.hangMu.Unlock()
	old := n.fault.Load()
	wasDown := old != nil && old.Down
	if f == (Fault{}) {
		n.fault.Store(nil)
		if old != nil {
			n.faulty.Add(-1)
		}
	} else {
		n.fault.Store(&f)
		if old == nil {
			n.faulty.Add(1)
		}
		for _, nd := range n.byHost {
			_ = nd.Pool.Close() // stops the multiplexed connections it serves
		}
	}
	if n.closed || f.Down == wasDown {
		return
	}
	if f.Down {
		_ = n.srv.Close() // a multiplexed connection outlives it: the Pool.Close above ends it
		<-n.done
		return
	}
	ln, err := net.Listen("tcp", strings.TrimPrefix(n.Addr, "http://"))
	if err != nil {
		n.t.Errorf("nethttptest: %s back up: %v", n.Addr, err)
		return
	}
	n.serve(ln)
}

// shutdown stops the node for good and waits for its goroutines. Its
// peer list is emptied so that background retries of its writes end.
func (n *Node) shutdown() {
	n.reqMu.Lock()
	n.stopping = true
	n.reqMu.Unlock()
	n.mu.Lock()
	n.closed = true
	close(n.stop)
	if n.srv != nil {
		_ = n.srv.Close()
		<-n.done
	}
	n.mu.Unlock()
	if n.Pool != nil {
		// Before the wait: a multiplexed connection is a request of srv
		// that srv.Close does not end (it is hijacked); Close stops it.
		_ = n.Pool.Close()
	}
	n.reqs.Wait()
	if n.Pool != nil {
		_ = n.Pool.Set()
	}
}

// muxUpgrade is the Upgrade token of the multiplexed carriage
// (PROTOCOL.md, "Multiplexed carriage").
const muxUpgrade = "geecache-mux"

// errPartitioned is what a request across a partition fails with.
var errPartitioned = errors.New("nethttptest: partitioned")

// partition is a node's transport: it fails at once a request from or
// to a partitioned node of the cluster.
type partition struct {
	from   *Node
	byHost map[string]*Node // never written after Start
	base   http.RoundTripper
}

func (p *partition) RoundTrip(r *http.Request) (*http.Response, error) {
	if cut(p.from) || cut(p.byHost[r.URL.Host]) {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, fmt.Errorf("%s -> %s: %w", p.from.Addr, r.URL.Host, errPartitioned)
	}
	return p.base.RoundTrip(r)
}

func cut(n *Node) bool {
	if n == nil {
		return false
	}
	f := n.fault.Load()
	return f != nil && f.Partitioned
}
