package bench

import (
	"bufio"
	"context"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The clusters of the fault and freshness benchmarks (fault_test.go,
// freshness_test.go). They need group options of their own (the default
// peer policy, TTLs, a counting logger), so they are built here rather
// than by gee_test.go's helpers.

const fxGroup = "bench-fx"

// fxConfig configures the group of every node of an fxCluster.
type fxConfig struct {
	getter getter.Getter
	budget int64              // 0: 64 MiB
	opts   cache.GroupOptions // Peers and Logger are set per node
	// logs, if not nil, receives node 0's logs (group and pool); the other
	// nodes log nowhere.
	logs *fxLogCount
	// hung lists the nodes that are hung listeners instead of nodes.
	hung map[int]bool
	// transport, if not nil, is node 0's PoolOptions.Transport.
	transport http.RoundTripper
	// readTimeout, if not 0, replaces the ReadTimeout and
	// ReadHeaderTimeout of nethttp.NewServer's servers.
	readTimeout time.Duration
}

// fxNode is one node of an fxCluster: a GeeCache node behind
// nethttp.NewServer, or a hung listener.
type fxNode struct {
	addr  string
	pool  *nethttp.Pool
	group *cache.Group
	srv   *nethttp.Server
	done  chan struct{}
	hung  *fxHung

	gets, deletes, puts atomic.Int64 // peer requests served, by method
}

// fxCluster is nodes on 127.0.0.1 ports the OS picked, each with its own
// registry; node 0 is the one the benchmarks ask.
type fxCluster struct {
	nodes []*fxNode
}

func newFxCluster(tb testing.TB, n int, cfg fxConfig) *fxCluster {
	tb.Helper()
	c := &fxCluster{}
	lns := make([]net.Listener, n)
	addrs := make([]string, n)
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		lns[i], addrs[i] = ln, "http://"+ln.Addr().String()
	}
	budget := cfg.budget
	if budget == 0 {
		budget = 64 << 20
	}
	for i := range n {
		nd := &fxNode{addr: addrs[i], done: make(chan struct{})}
		c.nodes = append(c.nodes, nd)
		if cfg.hung[i] {
			nd.hung = startFxHung(lns[i])
			close(nd.done)
			continue
		}
		log := quietLog()
		if i == 0 && cfg.logs != nil {
			log = slog.New(cfg.logs)
		}
		reg := cache.NewRegistry()
		po := &nethttp.PoolOptions{Logger: log, UnsignedWrites: true} // a loopback test cluster without a secret
		if i == 0 {
			po.Transport = cfg.transport
		}
		pool, err := nethttp.NewPool(addrs[i], reg, po)
		if err != nil {
			tb.Fatal(err)
		}
		o := cfg.opts
		o.Peers, o.Logger = pool, log
		grp, err := reg.NewGroup(fxGroup, budget, cfg.getter, &o)
		if err != nil {
			tb.Fatal(err)
		}
		if err := pool.Set(addrs...); err != nil {
			tb.Fatal(err)
		}
		nd.pool, nd.group = pool, grp
		nd.srv = nethttp.NewServer("", http.HandlerFunc(nd.serve), nil)
		if cfg.readTimeout != 0 {
			nd.srv.ReadTimeout, nd.srv.ReadHeaderTimeout = cfg.readTimeout, cfg.readTimeout
		}
		go func(ln net.Listener) {
			defer close(nd.done)
			_ = nd.srv.Serve(ln)
		}(lns[i])
	}
	tb.Cleanup(c.close)
	return c
}

// serve counts a peer request and passes it to the node's pool.
func (nd *fxNode) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		nd.gets.Add(1)
	case http.MethodDelete:
		nd.deletes.Add(1)
	case http.MethodPut:
		nd.puts.Add(1)
	}
	nd.pool.ServeHTTP(w, r)
}

// close shuts every node down and waits for its server.
func (c *fxCluster) close() {
	for _, nd := range c.nodes {
		if nd.hung != nil {
			nd.hung.close()
			continue
		}
		_ = nd.srv.Close()
		<-nd.done
		_ = nd.pool.Close()
	}
}

// closeIdle closes every node's idle keep-alive connections.
func (c *fxCluster) closeIdle() {
	for _, nd := range c.nodes {
		if nd.pool != nil {
			_ = nd.pool.Close()
		}
	}
}

// owner returns the index of the node that owns key.
func (c *fxCluster) owner(key string) int {
	a := c.nodes[0].pool.Owner(key)
	for i, nd := range c.nodes {
		if nd.addr == a {
			return i
		}
	}
	return -1
}

// fxHung is a listener that accepts connections and reads their requests
// but never answers, as a stopped (SIGSTOP) process whose kernel still
// accepts would. A connection is closed when its client closes it.
type fxHung struct {
	ln       net.Listener
	requests atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool
}

func startFxHung(ln net.Listener) *fxHung {
	h := &fxHung{ln: ln, conns: map[net.Conn]bool{}}
	h.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns[c] = true
			h.mu.Unlock()
			h.wg.Go(func() {
				r := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(r); err != nil {
						break
					}
					h.requests.Add(1)
				}
				h.mu.Lock()
				delete(h.conns, c)
				h.mu.Unlock()
				_ = c.Close()
			})
		}
	})
	return h
}

func (h *fxHung) close() {
	_ = h.ln.Close()
	h.mu.Lock()
	for c := range h.conns {
		_ = c.Close()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// fxLogCount is a slog.Handler that counts the lines at Info and above,
// by message and peer, and notes when the first "peer ejected" warning
// was logged.
type fxLogCount struct {
	lines      atomic.Int64
	firstEject atomic.Int64 // Unix nanoseconds; 0 until then
	mu         sync.Mutex
	kinds      map[string]int
}

// byKind returns the lines counted by message and peer.
func (h *fxLogCount) byKind() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.kinds)
}

func (h *fxLogCount) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *fxLogCount) Handle(_ context.Context, r slog.Record) error {
	h.lines.Add(1)
	kind := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "peer" {
			kind += " peer=" + a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	if h.kinds == nil {
		h.kinds = map[string]int{}
	}
	h.kinds[kind]++
	h.mu.Unlock()
	if r.Message == "geecache: peer ejected, loading its keys elsewhere" {
		h.firstEject.CompareAndSwap(0, r.Time.UnixNano())
	}
	return nil
}

func (h *fxLogCount) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *fxLogCount) WithGroup(string) slog.Handler      { return h }

// fxFDs returns the number of open file descriptors of the process, or -1
// where /proc/self/fd does not exist.
func fxFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// fxSettle waits, at most limit, until the process has at most goroutines
// goroutines and fds open descriptors, and returns the counts it saw
// last and how long it waited.
func fxSettle(goroutines, fds int, limit time.Duration) (g, f int, waited time.Duration) {
	start := time.Now()
	for {
		g, f = runtime.NumGoroutine(), fxFDs()
		waited = time.Since(start)
		if (g <= goroutines && f <= fds) || waited >= limit {
			return g, f, waited
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fxPercentile returns the p-th percentile of sorted durations (0 if none).
func fxPercentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p/100))]
}

// fxSource is a Getter that answers every key after latency (a slow
// source), and counts its calls.
type fxSource struct {
	latency time.Duration
	calls   atomic.Int64
	active  atomic.Int64 // calls not yet returned
	// hold, if set, is a channel each call waits for after its
	// latency, until it is closed (tests: an event, not a time, ends a
	// call).
	hold atomic.Pointer[chan struct{}]
}

func (s *fxSource) Get(ctx context.Context, key string) ([]byte, error) {
	s.calls.Add(1)
	s.active.Add(1)
	defer s.active.Add(-1)
	if s.latency > 0 {
		t := time.NewTimer(s.latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if h := s.hold.Load(); h != nil {
		select {
		case <-*h:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return fxValue(key), nil
}

// fxValue is the 64-byte value of key.
func fxValue(key string) []byte {
	v := make([]byte, 64)
	for i := range v {
		v[i] = key[i%len(key)] ^ byte(i)
	}
	return v
}

// fxSorted returns d sorted.
func fxSorted(d []time.Duration) []time.Duration { return slices.Sorted(slices.Values(d)) }
