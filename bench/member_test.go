package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The membership workload: in-process nethttp nodes on
// loopback, closed-loop clients spread over the live nodes' groups asking
// zipf(1.01) keys, each loaded from a source that takes 2 ms and counts
// its loads per key and per second. A "discovery" sets every node's peer
// list, as DNS or Kubernetes would. It compiles against a tree without
// Pool.Drain too (it is used only where it exists), so that the same file
// measures the baseline; see bench/README.md, "Membership changes".

const (
	mbGroup   = "m"
	mbValue   = 64 // bytes per value
	mbBuckets = 600
	mbLatency = 2 * time.Millisecond
)

// mbSource counts loads per key and per second since start.
type mbSource struct {
	start   time.Time
	perKey  []atomic.Int32
	buckets [mbBuckets]atomic.Int64
}

func newMBSource(keys int) *mbSource {
	return &mbSource{start: time.Now(), perKey: make([]atomic.Int32, keys)}
}

func mbKey(i int) string { return fmt.Sprintf("k%06d", i) }

func mbValueOf(key string) []byte {
	v := make([]byte, mbValue)
	copy(v, key)
	for i := len(key); i < mbValue; i++ {
		v[i] = '.'
	}
	return v
}

// getter is node's source; w (if not nil) records its loads of the keys
// it watches, with the step they were made in (killtrace_test.go).
func (s *mbSource) getter(node int16, w *mbWatch) getter.Getter {
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		var id int
		if _, err := fmt.Sscanf(key, "k%06d", &id); err != nil || id >= len(s.perKey) {
			return nil, getter.ErrNotFound
		}
		s.perKey[id].Add(1)
		if _, ok := w.watched(key); ok {
			e := mbEvent{at: time.Now().UnixNano(), id: int32(id), node: node, peer: -1, kind: evLoad}
			if ctx.Value(mbStepKey{}) == "fallback" {
				e.kind = evFallback
			}
			w.add(e)
		}
		if b := int(time.Since(s.start) / time.Second); b < mbBuckets {
			s.buckets[b].Add(1)
		}
		t := time.NewTimer(mbLatency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return mbValueOf(key), nil
	})
}

// total returns the loads of every key so far.
func (s *mbSource) total() (n int64) {
	for i := range s.perKey {
		n += int64(s.perKey[i].Load())
	}
	return n
}

func (s *mbSource) loads() []int32 {
	out := make([]int32, len(s.perKey))
	for i := range s.perKey {
		out[i] = s.perKey[i].Load()
	}
	return out
}

// mbNode is one node; a restart makes a new one at the same address.
type mbNode struct {
	addr   string
	serial int16 // the nodes started before this one, restarts included
	pool   *nethttp.Pool
	group  *cache.Group
	srv    *nethttp.Server
	done   chan struct{}
}

// mbCluster is the nodes, the discovery and the clients' view of them.
type mbCluster struct {
	tb     testing.TB
	src    *mbSource
	budget int64
	rt     *http.Transport
	mu     sync.Mutex
	nodes  map[string]*mbNode // live, by address
	lb     atomic.Pointer[[]*mbNode]
	drain  time.Duration
	watch  *mbWatch // nil: no Tracer, no record of loads (killtrace_test.go)
	starts int16
	// sockets, if not nil, keeps each node's listening socket across its
	// restarts, by address (inplace_test.go).
	sockets map[string]*keptSocket
	// tune, if set, may wrap a new node's Getter and change its group's
	// options (steady_test.go instruments the loads with it).
	tune func(addr string, g getter.Getter, o *cache.GroupOptions) getter.Getter
}

func newMBCluster(tb testing.TB, n, keys int, budget int64, drain time.Duration) *mbCluster {
	return newMBClusterWatched(tb, n, keys, budget, drain, nil)
}

// newMBClusterTuned is newMBCluster with every node's Getter and options
// passed through tune (nil: as they are).
func newMBClusterTuned(tb testing.TB, n, keys int, budget int64, drain time.Duration,
	tune func(addr string, g getter.Getter, o *cache.GroupOptions) getter.Getter) *mbCluster {
	return newMBClusterWith(tb, n, keys, budget, drain, nil, tune)
}

// newMBClusterWatched is newMBCluster with w (if not nil) as every node's
// Tracer and the record of their loads.
func newMBClusterWatched(tb testing.TB, n, keys int, budget int64, drain time.Duration, w *mbWatch) *mbCluster {
	return newMBClusterWith(tb, n, keys, budget, drain, w, nil)
}

func newMBClusterWith(tb testing.TB, n, keys int, budget int64, drain time.Duration, w *mbWatch,
	tune func(addr string, g getter.Getter, o *cache.GroupOptions) getter.Getter) *mbCluster {
	c := &mbCluster{tb: tb, src: newMBSource(keys), budget: budget, rt: nethttp.NewTransport(),
		nodes: map[string]*mbNode{}, drain: drain, watch: w, tune: tune}
	return c.startNodes(n)
}

// newMBClusterKept is newMBCluster whose nodes' listening sockets, with
// kept, outlive them (inplace_test.go).
func newMBClusterKept(tb testing.TB, n, keys int, budget int64, drain time.Duration, kept bool) *mbCluster {
	if !kept {
		return newMBCluster(tb, n, keys, budget, drain)
	}
	c := &mbCluster{tb: tb, src: newMBSource(keys), budget: budget, rt: nethttp.NewTransport(),
		nodes: map[string]*mbNode{}, drain: drain, sockets: map[string]*keptSocket{}}
	return c.startNodes(n)
}

// startNodes starts n nodes and gives every node and the clients the list.
func (c *mbCluster) startNodes(n int) *mbCluster {
	for range n {
		c.start("")
	}
	c.discover(nil)
	c.publish()
	return c
}

// start starts a fresh node at addr ("" for a new port) with the live
// nodes' list (its own included). In a cluster whose sockets are kept
// (inplace_test.go), its listening socket outlives the node.
func (c *mbCluster) start(addr string) *mbNode {
	c.tb.Helper()
	ln := c.listen(addr)
	if c.sockets != nil {
		s := keepSocket(ln)
		c.mu.Lock()
		c.sockets["http://"+ln.Addr().String()] = s
		c.mu.Unlock()
		ln = s.view()
	}
	return c.startOn(ln, nil)
}

// listen listens at addr ("" for a new port).
func (c *mbCluster) listen(addr string) net.Listener {
	c.tb.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for range 100 { // a port just closed may take a moment to be free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		c.tb.Fatal(err)
	}
	return ln
}

// startOn starts a fresh node on ln with the live nodes' list (its own
// included); before, if not nil, runs once its peers are set and before
// it serves.
func (c *mbCluster) startOn(ln net.Listener, before func(*mbNode)) *mbNode {
	c.tb.Helper()
	n := &mbNode{addr: "http://" + ln.Addr().String(), done: make(chan struct{})}
	c.mu.Lock()
	n.serial = c.starts
	c.starts++
	c.mu.Unlock()
	gopts := &cache.GroupOptions{}
	if c.watch != nil {
		c.watch.setSerial(n.addr, n.serial)
		gopts.Tracer = &mbTracer{w: c.watch, node: n.serial}
	}
	reg := cache.NewRegistry()
	quiet := slog.New(slog.DiscardHandler)
	opts := &nethttp.PoolOptions{Transport: c.rt, Logger: quiet}
	setDrain(opts, c.drain)
	var err error
	if n.pool, err = nethttp.NewPool(n.addr, reg, opts); err != nil {
		c.tb.Fatal(err)
	}
	gopts.Peers, gopts.Logger = n.pool, quiet
	get := c.src.getter(n.serial, c.watch)
	if c.tune != nil {
		get = c.tune(n.addr, get, gopts)
	}
	if n.group, err = reg.NewGroup(mbGroup, c.budget, get, gopts); err != nil {
		c.tb.Fatal(err)
	}
	n.srv = nethttp.NewServer("", n.pool, nil)
	c.mu.Lock()
	c.nodes[n.addr] = n
	list := c.addrsLocked()
	c.mu.Unlock()
	if err := n.pool.Set(list...); err != nil {
		c.tb.Fatal(err)
	}
	if before != nil {
		before(n)
	}
	go func() {
		defer close(n.done)
		if err := n.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			c.tb.Errorf("serve %s: %v", n.addr, err)
		}
	}()
	return n
}

func (c *mbCluster) addrsLocked() []string {
	var out []string
	for a := range c.nodes {
		out = append(out, a)
	}
	return out
}

// discover sets every live node's list to the live nodes but leaving.
func (c *mbCluster) discover(leaving *mbNode) {
	c.mu.Lock()
	var list []string
	var all []*mbNode
	for a, n := range c.nodes {
		all = append(all, n)
		if n != leaving {
			list = append(list, a)
		}
	}
	c.mu.Unlock()
	for _, n := range all {
		if n != leaving {
			if err := n.pool.Set(list...); err != nil {
				c.tb.Fatal(err)
			}
		}
	}
}

// publish makes the clients see the live nodes but skip.
func (c *mbCluster) publish(skip ...*mbNode) {
	c.mu.Lock()
	var ns []*mbNode
	for _, n := range c.nodes {
		keep := true
		for _, s := range skip {
			keep = keep && n != s
		}
		if keep {
			ns = append(ns, n)
		}
	}
	c.mu.Unlock()
	c.lb.Store(&ns)
}

// stop stops n: gracefully (its Pool's Drain, where the Pool has one,
// then its server's), or as a crash (kill).
func (c *mbCluster) stop(n *mbNode, kill bool) {
	if kill {
		_ = n.srv.Close()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), c.drain+10*time.Second)
		drainPool(ctx, n.pool, c.drain)
		_ = n.srv.Shutdown(ctx)
		cancel()
	}
	<-n.done
	c.mu.Lock()
	delete(c.nodes, n.addr)
	c.mu.Unlock()
}

func (c *mbCluster) close() {
	c.mu.Lock()
	ns := make([]*mbNode, 0, len(c.nodes))
	for _, n := range c.nodes {
		ns = append(ns, n)
	}
	c.mu.Unlock()
	for _, n := range ns {
		_ = n.srv.Close()
		<-n.done
		_ = n.pool.Set()
	}
	for _, s := range c.sockets {
		s.close()
	}
	c.rt.CloseIdleConnections()
}

// mbClients runs closed-loop clients on the published nodes until stop,
// each Get bounded; it counts Gets, errors and wrong values.
type mbClients struct {
	gets, errs, wrong atomic.Int64
	firstErr          atomic.Value
	wg                sync.WaitGroup
	stop              chan struct{}
	asked             []atomic.Int64 // per key: Unix ns of the last Get
}

func (c *mbCluster) clients(n, keys int) *mbClients {
	cl := &mbClients{stop: make(chan struct{}), asked: make([]atomic.Int64, keys)}
	for i := range n {
		cl.wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 18))
			z := rand.NewZipf(r, 1.01, 1, uint64(keys-1))
			base := context.WithValue(context.Background(), mbClientKey{}, true) // a client's Get, for the Tracer
			for {
				select {
				case <-cl.stop:
					return
				default:
				}
				ns := *c.lb.Load()
				node := ns[r.IntN(len(ns))]
				id := int(z.Uint64())
				k := mbKey(id)
				cl.asked[id].Store(time.Now().UnixNano())
				ctx, cancel := context.WithTimeout(base, 10*time.Second)
				v, err := node.group.Get(ctx, k)
				cancel()
				cl.gets.Add(1)
				switch {
				case err != nil:
					if cl.errs.Add(1) == 1 {
						cl.firstErr.Store(err)
					}
				case !v.EqualBytes(mbValueOf(k)):
					cl.wrong.Add(1)
				}
			}
		})
	}
	return cl
}

func (cl *mbClients) end() {
	close(cl.stop)
	cl.wg.Wait()
}

// mbSecond returns the current 1 s bucket.
func (c *mbCluster) second() int { return int(time.Since(c.src.start) / time.Second) }

// rate returns the mean loads per second over buckets [from, to) and the
// largest bucket.
func (c *mbCluster) rate(from, to int) (mean float64, peak int64) {
	var sum int64
	for b := from; b < to && b < mbBuckets; b++ {
		v := c.src.buckets[b].Load()
		sum += v
		peak = max(peak, v)
	}
	return float64(sum) / float64(max(to-from, 1)), peak
}

// waitSecond sleeps to the start of the next 1 s bucket.
func (c *mbCluster) waitSecond() int {
	s := c.second() + 1
	time.Sleep(time.Until(c.src.start.Add(time.Duration(s) * time.Second)))
	return s
}
