//go:build !js && !wasip1

package nethttp

import (
	"context"
	"errors"
	"fmt"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// The multiplexed carriage (PoolOptions.Multiplex) between real nodes on
// 127.0.0.1.

// muxListener counts the connections it accepts and keeps them, so that
// a test can reset them.
type muxListener struct {
	net.Listener
	accepts atomic.Int64
	mu      sync.Mutex
	conns   []net.Conn
}

func (l *muxListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepts.Add(1)
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

// reset closes every connection accepted so far.
func (l *muxListener) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		_ = c.Close()
	}
	l.conns = nil
}

// A muxNode is one node of a test cluster.
type muxNode struct {
	pool  *Pool
	group *cache.Group
	srv   *Server
	ln    *muxListener
	addr  string
}

// muxSource answers "v:"+key, "not found" for a key that starts with
// "missing", and, for a key that starts with "slow", blocks until release
// is closed or the load's context ends (recording that in cancelled); it
// counts the loads in flight and their peak.
type muxSource struct {
	release   chan struct{}
	started   chan string // a slow load has begun
	cancelled atomic.Int64
	inFlight  atomic.Int64
	peak      atomic.Int64
	loads     atomic.Int64
}

func newMuxSource() *muxSource {
	return &muxSource{release: make(chan struct{}), started: make(chan string, 1024)}
}

func (s *muxSource) Get(ctx context.Context, key string) ([]byte, error) {
	s.loads.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	switch {
	case strings.HasPrefix(key, "missing"):
		return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
	case strings.HasPrefix(key, "slow"):
		s.started <- key
		select {
		case <-s.release:
		case <-ctx.Done():
			s.cancelled.Add(1)
			return nil, ctx.Err()
		}
	}
	return []byte("v:" + key), nil
}

// startMuxCluster starts n nodes, each a Pool with opts (Multiplex set)
// behind a Server on 127.0.0.1, with one group "g" on src; wrap, if not
// nil, stands between a node's Server and its Pool.
func startMuxCluster(t *testing.T, n int, src getter.Getter, opts PoolOptions, wrap func(i int, p *Pool) http.Handler) []*muxNode {
	t.Helper()
	opts.Multiplex = true
	opts.Logger = slog.New(slog.DiscardHandler)
	var nodes []*muxNode
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		nd := &muxNode{ln: &muxListener{Listener: ln}, addr: "http://" + ln.Addr().String()}
		nodes = append(nodes, nd)
		addrs = append(addrs, nd.addr)
	}
	for i, nd := range nodes {
		reg := cache.NewRegistry()
		pool, err := NewPool(nd.addr, reg, &opts)
		if err != nil {
			t.Fatal(err)
		}
		mustSet(t, pool, addrs...)
		// No hedge: under -race a slow answer would be raced by a local
		// load, and the tests count where each answer came from.
		g, err := reg.NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: pool, Logger: opts.Logger, PeerPolicy: cache.PeerPolicy{NoHedge: true}})
		if err != nil {
			t.Fatal(err)
		}
		var h http.Handler = pool
		if wrap != nil {
			h = wrap(i, pool)
		}
		nd.pool, nd.group, nd.srv = pool, g, NewServer("", h, nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = nd.srv.Serve(nd.ln)
		}()
		t.Cleanup(func() {
			_ = nd.srv.Close()
			<-done
			_ = pool.Close()
		})
	}
	return nodes
}

// ownedKeys returns n keys with prefix that node owner owns.
func ownedKeys(nodes []*muxNode, owner, n int, prefix string) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if k := fmt.Sprintf("%s-%d", prefix, i); nodes[0].pool.Owner(k) == nodes[owner].addr {
			keys = append(keys, k)
		}
	}
	return keys
}

// TestMultiplexOneConnectionPerPeer: 64 callers of node A, each fetching
// keys node B owns, present and missing, get B's answers, all over one
// connection to B (over HTTP/1.1 the same load opens many).
func TestMultiplexOneConnectionPerPeer(t *testing.T) {
	src := newMuxSource()
	nodes := startMuxCluster(t, 2, src, PoolOptions{}, nil)
	a, b := nodes[0], nodes[1]
	present := ownedKeys(nodes, 1, 256, "k")
	missing := ownedKeys(nodes, 1, 64, "missing")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for c := range 64 {
		wg.Go(func() {
			for i := c; i < len(present); i += 64 {
				if v, err := a.group.Get(t.Context(), present[i]); err != nil || v.String() != "v:"+present[i] {
					errs <- fmt.Errorf("Get(%s) = %q, %v", present[i], v.String(), err)
					return
				}
			}
			if _, err := a.group.Get(t.Context(), missing[c]); !errors.Is(err, getter.ErrNotFound) || !strings.Contains(err.Error(), missing[c]+" not exist") {
				errs <- fmt.Errorf("Get(%s) = %v; want the owner's not found", missing[c], err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := a.group.Stats()
	if want := int64(len(present) + len(missing)); s.PeerLoads != want || s.PeerErrors != 0 || s.LocalLoads != 0 {
		t.Errorf("node A: %d peer loads, %d peer errors, %d local loads; want %d, 0, 0", s.PeerLoads, s.PeerErrors, s.LocalLoads, want)
	}
	if n := b.ln.accepts.Load(); n != 1 {
		t.Errorf("node B accepted %d connections; want 1", n)
	}
}

// TestMultiplexFallsBackToHTTP: a peer that answers the upgrade without a
// 101 (an older node: here B's handler hides the Upgrade from its Pool,
// which then answers 400 as any node of an older release would) is asked
// over HTTP/1.1, and answers.
func TestMultiplexFallsBackToHTTP(t *testing.T) {
	src := newMuxSource()
	var httpReqs atomic.Int64
	nodes := startMuxCluster(t, 2, src, PoolOptions{}, func(i int, p *Pool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if i == 1 {
				r.Header.Del("Upgrade")
				if strings.HasPrefix(r.URL.Path, "/_geecache/g/") {
					httpReqs.Add(1)
				}
			}
			p.ServeHTTP(w, r)
		})
	})
	a := nodes[0]
	for _, k := range ownedKeys(nodes, 1, 8, "k") {
		if v, err := a.group.Get(t.Context(), k); err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%s) = %q, %v", k, v.String(), err)
		}
	}
	k := ownedKeys(nodes, 1, 1, "missing")[0]
	if _, err := a.group.Get(t.Context(), k); !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("Get(%s) = %v; want not found", k, err)
	}
	if s := a.group.Stats(); s.PeerLoads != 9 || s.PeerErrors != 0 {
		t.Errorf("node A: %d peer loads, %d peer errors; want 9, 0", s.PeerLoads, s.PeerErrors)
	}
	if n := httpReqs.Load(); n != 9 {
		t.Errorf("node B served %d requests over HTTP/1.1; want 9", n)
	}
}

// rawMux opens a multiplexed connection to addr ("host:port") by hand.
func rawMux(t *testing.T, addr string) (net.Conn, *muxReader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_, _ = io.WriteString(c, "GET "+mux.Path+" HTTP/1.1\r\nHost: "+addr+"\r\nConnection: Upgrade\r\nUpgrade: "+mux.Protocol+"\r\n\r\n")
	r := newMuxReader(c)
	resp, err := http.ReadResponse(r.br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v, %v", resp, err)
	}
	return c, r
}

// TestMultiplexUnsignedFrameRefused: with a Secret, a request frame
// without a signature is refused exactly as an unsigned HTTP request is
// (same status, error code and body), and nothing is loaded for it.
func TestMultiplexUnsignedFrameRefused(t *testing.T) {
	src := newMuxSource()
	nodes := startMuxCluster(t, 2, src, PoolOptions{Cluster: Cluster{Secret: []byte("s3cret-s3cret-s3cret")}}, nil)
	b := nodes[1]
	host := strings.TrimPrefix(b.addr, "http://")
	key := ownedKeys(nodes, 1, 1, "k")[0]
	path := protocol.Path("g", key)

	resp, err := http.Get(b.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	httpBody, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned HTTP request: %d; want 401", resp.StatusCode)
	}

	c, r := rawMux(t, host)
	f := mux.StartFrame(nil, mux.KindRequest, 7)
	f = mux.AppendString(f, http.MethodGet)
	f = mux.AppendString(f, path)
	f, _ = mux.AppendFields(f, http.Header{"User-Agent": {"Go-http-client/1.1"}})
	mux.EndHead(f)
	mux.SetLen(f, 0)
	if _, err := c.Write(f); err != nil {
		t.Fatal(err)
	}
	kind, id, status, h, body, err := r.next()
	if err != nil || kind != mux.KindAnswer || id != 7 {
		t.Fatalf("answer frame: kind %d id %d, %v", kind, id, err)
	}
	if status != resp.StatusCode || h.Get(protocol.HeaderError) != resp.Header.Get(protocol.HeaderError) || string(body) != string(httpBody) {
		t.Errorf("frame answer %d %q %q; HTTP answer %d %q %q", status, h.Get(protocol.HeaderError), body,
			resp.StatusCode, resp.Header.Get(protocol.HeaderError), httpBody)
	}
	if n := src.loads.Load(); n != 0 {
		t.Errorf("%d loads for unsigned requests", n)
	}

	// Signed by node A's Pool, the same request is served over its own
	// multiplexed connection.
	if v, err := nodes[0].group.Get(t.Context(), key); err != nil || v.String() != "v:"+key {
		t.Fatalf("signed Get(%s) = %q, %v", key, v.String(), err)
	}
	if s := nodes[0].group.Stats(); s.PeerLoads != 1 || b.ln.accepts.Load() != 3 {
		t.Errorf("signed Get: %d peer loads, %d connections accepted by B; want 1, 3 (HTTP, raw, A's)", s.PeerLoads, b.ln.accepts.Load())
	}
}

// TestMultiplexSlowKeyDoesNotStallOthers: while node B loads one key
// slowly, node A's other Gets to B are answered over the same connection.
func TestMultiplexSlowKeyDoesNotStallOthers(t *testing.T) {
	src := newMuxSource()
	nodes := startMuxCluster(t, 2, src, PoolOptions{}, nil)
	a, b := nodes[0], nodes[1]
	slow := ownedKeys(nodes, 1, 1, "slow")[0]
	// Shorter than the client's Timeout (10 s): a Get stalled behind the
	// slow key would fail, not time out into a local load.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	slowDone := make(chan error, 1)
	go func() {
		v, err := a.group.Get(ctx, slow)
		if err == nil && v.String() != "v:"+slow {
			err = fmt.Errorf("value %q", v.String())
		}
		slowDone <- err
	}()
	<-src.started
	for _, k := range ownedKeys(nodes, 1, 8, "fast") {
		if v, err := a.group.Get(ctx, k); err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%s) = %q, %v while another key was loading", k, v.String(), err)
		}
	}
	select {
	case err := <-slowDone:
		t.Fatalf("the slow key returned before its load was released: %v", err)
	default:
	}
	close(src.release)
	if err := <-slowDone; err != nil {
		t.Errorf("slow key: %v", err)
	}
	if s := a.group.Stats(); s.PeerLoads != 9 || s.PeerErrors != 0 {
		t.Errorf("node A: %d peer loads, %d errors; want 9, 0", s.PeerLoads, s.PeerErrors)
	}
	if n := b.ln.accepts.Load(); n != 1 {
		t.Errorf("node B accepted %d connections; want 1", n)
	}
}

// TestMultiplexResetFailsPendingAndRedials: when B's end of the
// connection goes away with a request in flight, that Get is answered by
// A's own load at once (not after the timeout), and the next Get opens a
// new connection and is answered by B.
func TestMultiplexResetFailsPendingAndRedials(t *testing.T) {
	src := newMuxSource()
	nodes := startMuxCluster(t, 2, src, PoolOptions{Timeout: time.Hour}, nil)
	a, b := nodes[0], nodes[1]
	slow := ownedKeys(nodes, 1, 1, "slow")[0]
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a Get that waited for the timeout fails by this
	defer cancel()
	done := make(chan error, 1)
	go func() {
		v, err := a.group.Get(ctx, slow)
		if err == nil && v.String() != "v:"+slow {
			err = fmt.Errorf("value %q", v.String())
		}
		done <- err
	}()
	<-src.started // B loads it
	b.ln.reset()
	<-src.started // A loads it itself: the fetch failed
	close(src.release)
	if err := <-done; err != nil {
		t.Fatalf("slow key after the reset: %v", err)
	}
	if s := a.group.Stats(); s.PeerErrors != 1 || s.LocalLoads != 1 {
		t.Errorf("node A: %d peer errors, %d local loads; want 1, 1", s.PeerErrors, s.LocalLoads)
	}
	k := ownedKeys(nodes, 1, 1, "after")[0]
	if v, err := a.group.Get(ctx, k); err != nil || v.String() != "v:"+k {
		t.Fatalf("Get after the reset = %q, %v", v.String(), err)
	}
	if s := a.group.Stats(); s.PeerLoads != 1 || b.ln.accepts.Load() != 2 {
		t.Errorf("after the reset: %d peer loads, %d connections accepted by B; want 1, 2", s.PeerLoads, b.ln.accepts.Load())
	}
}

// TestMultiplexCancelKeepsConnection: a caller that gives up on a request
// in flight ends it alone: the owner's load for it is cancelled (as over
// HTTP when the caller goes away), and the connection serves the next
// requests.
func TestMultiplexCancelKeepsConnection(t *testing.T) {
	src := newMuxSource()
	nodes := startMuxCluster(t, 2, src, PoolOptions{}, nil)
	a, b := nodes[0], nodes[1]
	slow := ownedKeys(nodes, 1, 1, "slow")[0]
	peer, ok := a.pool.PickPeer(slow)
	if !ok {
		t.Fatal("A owns the slow key")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, err := peerGet(ctx, peer, "g", slow)
		done <- err
	}()
	<-src.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Get: %v; want context.Canceled", err)
	}
	testkit.WaitFor(t, "the owner's load to be cancelled", func() bool { return src.cancelled.Load() == 1 })
	for _, k := range ownedKeys(nodes, 1, 4, "k") {
		if v, _, err := peerGet(t.Context(), peer, "g", k); err != nil || string(v) != "v:"+k {
			t.Fatalf("Get(%s) after a cancel = %q, %v", k, v, err)
		}
	}
	if n := b.ln.accepts.Load(); n != 1 {
		t.Errorf("node B accepted %d connections; want 1", n)
	}
}

// TestMultiplexProcessing: the owner's "loading" (102 Processing) reaches
// the asking node as a frame, before the answer.
func TestMultiplexProcessing(t *testing.T) {
	src := newMuxSource()
	nodes := startMuxCluster(t, 2, src, PoolOptions{}, nil)
	slow := ownedKeys(nodes, 1, 1, "slow")[0]
	peer, _ := nodes[0].pool.PickPeer(slow)
	reported := make(chan struct{}, 8)
	done := make(chan error, 1)
	go func() {
		v, _, err := askOne(t.Context(), peer, cache.OpGet, "g", slow, func() { reported <- struct{}{} })
		if err == nil && string(v) != "v:"+slow {
			err = fmt.Errorf("value %q", v)
		}
		done <- err
	}()
	<-src.started
	<-reported // the load is blocked: only a 102 can have said so
	close(src.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestMultiplexInFlightCap: 300 requests at once on one connection are all
// answered, no more than mux.MaxInFlight of them served at a time.
func TestMultiplexInFlightCap(t *testing.T) {
	src := newMuxSource()
	nodes := startMuxCluster(t, 2, src, PoolOptions{}, nil)
	keys := ownedKeys(nodes, 1, 300, "slow")
	peer, _ := nodes[0].pool.PickPeer(keys[0])
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	for _, k := range keys {
		wg.Go(func() {
			if v, _, err := peerGet(t.Context(), peer, "g", k); err != nil || string(v) != "v:"+k {
				errs <- fmt.Errorf("Get(%s) = %q, %v", k, v, err)
			}
		})
	}
	for range mux.MaxInFlight {
		<-src.started
	}
	close(src.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if p := src.peak.Load(); p > mux.MaxInFlight {
		t.Errorf("%d loads at once on one connection; want at most %d", p, mux.MaxInFlight)
	}
	if n := nodes[1].ln.accepts.Load(); n != 1 {
		t.Errorf("node B accepted %d connections; want 1", n)
	}
}

// TestMultiplexBatch: a batch (GetMany) goes over the multiplexed
// connection too, present and missing keys.
func TestMultiplexBatch(t *testing.T) {
	src := newMuxSource()
	nodes := startMuxCluster(t, 2, src, PoolOptions{}, nil)
	a, b := nodes[0], nodes[1]
	keys := ownedKeys(nodes, 1, 64, "k")
	keys = append(keys, ownedKeys(nodes, 1, 2, "missing")...)
	got := 0
	a.group.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
		switch {
		case strings.HasPrefix(keys[i], "missing"):
			if !errors.Is(err, getter.ErrNotFound) {
				t.Errorf("GetMany %s: %v; want not found", keys[i], err)
			}
		case err != nil || v.String() != "v:"+keys[i]:
			t.Errorf("GetMany %s = %q, %v", keys[i], v.String(), err)
		default:
			got++
		}
	})
	if got != 64 {
		t.Errorf("%d of 64 values", got)
	}
	if s := a.group.Stats(); s.PeerErrors != 0 || s.LocalLoads != 0 {
		t.Errorf("node A: %d peer errors, %d local loads; want 0, 0", s.PeerErrors, s.LocalLoads)
	}
	if n := b.ln.accepts.Load(); n != 1 {
		t.Errorf("node B accepted %d connections; want 1", n)
	}
}
