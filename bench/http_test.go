package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The remote-fetch workload: httpClients goroutines ask node A of a
// three-node cluster for keys that another node owns. Every request is for
// a fresh key, so it is cold in A's hot cache and costs one peer request;
// the owner loads it from a cheap Getter (64 bytes).
const (
	httpClients = 64
	httpGroup   = "bench-http"
	httpBudget  = 64 << 20
	// httpRunLimit bounds a whole measured run, whatever b.N is.
	httpRunLimit = 2 * time.Minute
)

// countingListener counts the TCP connections it accepts.
type countingListener struct {
	net.Listener
	accepts atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepts.Add(1)
	}
	return c, err
}

func listenLoopback(tb testing.TB) *countingListener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return &countingListener{Listener: ln}
}

// cheapGetter answers every key with its 64-byte hitValue.
var cheapGetter = getter.Func(func(_ context.Context, key string) ([]byte, error) {
	return hitValue(key), nil
})

// An httpTarget is one system under the remote-fetch load.
type httpTarget struct {
	// get fetches key as a client of the system and returns the value's
	// length.
	get func(ctx context.Context, key string) (int, error)
	// remote reports whether key is owned by a node other than the one
	// the clients ask (always true for the bare server).
	remote func(key string) bool
	// accepts is the number of TCP connections the servers accepted.
	accepts func() int64
	// peerErrors counts remote fetches that failed and were loaded
	// locally instead (they would flatter the numbers).
	peerErrors func() int64
	// hedges, if not nil, counts the local loads started beside a slow
	// fetch.
	hedges func() int64
	// closeIdle closes the clients' idle keep-alive connections, so that
	// every measured run starts from a cold pool and new-conns counts
	// the pool's warm-up as well as any churn.
	closeIdle func()
	// warmOwners loads keys into their owners' memory without going
	// through the asked node, so that a later Get costs the asked node a
	// remote fetch and the owner only a hit.
	warmOwners func(ctx context.Context, keys []string) error
	// activate, if not nil, readies the system before a block of
	// requests (two systems may share one cluster).
	activate func()
	// otherCPU, if not nil, is the CPU time used so far by the system's
	// nodes in other processes.
	otherCPU func() time.Duration
	// forget, if not nil, drops keys from every node's memory, so that
	// a benchmark of large values keeps only one block's values alive.
	forget func(keys []string)
}

// remoteKeys returns n fresh keys that t's asked node does not own;
// round makes the keys of every run distinct. The keys have no space:
// golang/groupcache's client escapes one as "+", which its server does not
// unescape, so the owner would see another key and forward the request
// a second time.
func remoteKeys(t *httpTarget, round *atomic.Int64, n int) []string {
	r := round.Add(1)
	keys := make([]string, 0, n)
	for i := 0; len(keys) < n; i++ {
		if k := fmt.Sprintf("r%d/key-%d", r, i); t.remote(k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// hedgeCount is t's hedges so far, 0 for a system without them.
func (t *httpTarget) hedgeCount() int64 {
	if t.hedges == nil {
		return 0
	}
	return t.hedges()
}

// loadResult is what one load run observed.
type loadResult struct {
	elapsed    time.Duration
	lat        []time.Duration // sorted
	conns      int64           // TCP connections the servers accepted
	peerErrors int64
	hedges     int64
	failed     int64
	firstErr   error
}

func (r *loadResult) percentile(p int) time.Duration { return r.lat[len(r.lat)*p/100] }

// httpLoad gets every key once from clients goroutines and checks that
// each value is wantLen bytes long. Each run is bounded by httpRunLimit.
func httpLoad(t *httpTarget, keys []string, clients, wantLen int) *loadResult {
	res := &loadResult{lat: make([]time.Duration, len(keys))}
	var next, failed atomic.Int64
	var errOnce sync.Once
	conns0, perr0, hedges0 := t.accepts(), t.peerErrors(), t.hedgeCount()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			// A context per client, not one shared by all: 64 clients
			// deriving request contexts from one parent would contend
			// on the parent's lock, which real clients do not.
			ctx, cancel := context.WithTimeout(context.Background(), httpRunLimit)
			defer cancel()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(keys) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				n, err := t.get(ctx, keys[i])
				res.lat[i] = time.Since(t0)
				if err == nil && n != wantLen {
					err = fmt.Errorf("key %q: got %d bytes, want %d", keys[i], n, wantLen)
				}
				if err != nil {
					failed.Add(1)
					errOnce.Do(func() { res.firstErr = err })
				}
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.failed = failed.Load()
	res.conns = t.accepts() - conns0
	res.peerErrors = t.peerErrors() - perr0
	res.hedges = t.hedgeCount() - hedges0
	slices.Sort(res.lat)
	return res
}

// ourCluster is three GeeCache nodes, each with its own registry, Pool
// and http.Server on a loopback port the OS picked.
type ourCluster struct {
	nodes []*ourNode
}

type ourNode struct {
	ln    *countingListener
	srv   *nethttp.Server
	pool  *nethttp.Pool
	reg   *cache.Registry // the group's, to act on this node alone
	group *cache.Group
	done  chan struct{}
}

// newOurCluster returns n nodes whose group has httpBudget bytes and the
// cheap Getter.
func newOurCluster(tb testing.TB, n int) *ourCluster {
	return newOurClusterOf(tb, n, httpBudget, cheapGetter, nil)
}

// benchSecret is the Cluster.Secret of the signed clusters
// (geecache-secret).
var benchSecret = []byte("bench-secret-0123456789abcdef")

// newOurClusterOf returns n nodes whose group httpGroup has budget bytes
// and Getter g, signing with secret if it is not nil.
func newOurClusterOf(tb testing.TB, n int, budget int64, g getter.Getter, secret []byte) *ourCluster {
	c := &ourCluster{}
	var addrs []string
	for range n {
		ln := listenLoopback(tb)
		addrs = append(addrs, "http://"+ln.Addr().String())
		c.nodes = append(c.nodes, &ourNode{ln: ln, done: make(chan struct{})})
	}
	for i, nd := range c.nodes {
		nd.pool, nd.reg, nd.group = newGeeNode(tb, addrs[i], addrs, httpGroup, budget, g, secret)
		nd.srv = nethttp.NewServer("", nd.pool, nil)
		go func() {
			defer close(nd.done)
			_ = nd.srv.Serve(nd.ln)
		}()
	}
	tb.Cleanup(c.close)
	return c
}

// ownerLoads is how many keys the nodes other than node 0 have loaded.
func (c *ourCluster) ownerLoads() int64 {
	var n int64
	for _, nd := range c.nodes[1:] {
		n += nd.group.Stats().LocalLoads
	}
	return n
}

func (c *ourCluster) close() {
	for _, nd := range c.nodes {
		_ = nd.srv.Close()
		<-nd.done
		_ = nd.pool.Close()
	}
}

// target is the load on node 0 for keys that node 1 or 2 owns.
func (c *ourCluster) target() *httpTarget {
	a := c.nodes[0]
	return &httpTarget{
		get: func(ctx context.Context, key string) (int, error) {
			v, err := a.group.Get(ctx, key)
			return v.Len(), err
		},
		remote: func(key string) bool { return a.pool.Owner(key) != a.pool.Self() },
		accepts: func() int64 {
			var n int64
			for _, nd := range c.nodes {
				n += nd.ln.accepts.Load()
			}
			return n
		},
		peerErrors: func() int64 { return a.group.Stats().PeerErrors },
		hedges:     func() int64 { return a.group.Stats().Hedges },
		closeIdle:  func() { _ = a.pool.Close() },
		warmOwners: func(ctx context.Context, keys []string) error {
			owners := make(map[string]*cache.Registry, len(c.nodes))
			for _, nd := range c.nodes {
				owners[nd.pool.Self()] = nd.reg
			}
			for _, k := range keys {
				if err := warmHere(ctx, owners[a.pool.Owner(k)], httpGroup, k); err != nil {
					return err
				}
			}
			return nil
		},
		forget: func(keys []string) {
			for _, nd := range c.nodes {
				// This node only, not Remove: a Remove also sends each
				// peer a DELETE, which they refuse (no secret, no
				// UnsignedWrites) and which is then retried in the
				// background, into the next measured block (hundreds of
				// new connections a block at 1 MiB values).
				dropHere(context.Background(), nd.reg, httpGroup, keys...)
			}
		},
	}
}

// bareServer answers GET /k/{key} with the key's value: one HTTP round
// trip on a keep-alive pool sized for the clients, and nothing else. Its
// client reads a body into one buffer of the announced length.
type bareServer struct {
	ln   *countingListener
	srv  *http.Server
	tr   *http.Transport
	hc   *http.Client
	base string
	done chan struct{}
}

// newBareServer returns a bare server that answers with hitValue.
func newBareServer(tb testing.TB) *bareServer { return newBareServerOf(tb, hitValue) }

// newBareServerOf returns a bare server that answers key with value(key).
func newBareServerOf(tb testing.TB, value func(key string) []byte) *bareServer {
	s := &bareServer{ln: listenLoopback(tb), done: make(chan struct{})}
	s.base = "http://" + s.ln.Addr().String() + "/k/"
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: bareHandler(value)}
	s.tr = &http.Transport{MaxIdleConnsPerHost: 2 * httpClients, IdleConnTimeout: 90 * time.Second}
	s.hc = &http.Client{Transport: s.tr}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(s.ln)
	}()
	tb.Cleanup(func() {
		_ = s.srv.Close()
		<-s.done
		s.tr.CloseIdleConnections()
	})
	return s
}

// bareHandler is the bare server's handler: GET /k/{key} answers value(key).
func bareHandler(value func(key string) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := url.PathUnescape(r.URL.EscapedPath()[len("/k/"):])
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		v := value(key)
		w.Header().Set("Content-Length", strconv.Itoa(len(v)))
		_, _ = w.Write(v)
	})
}

func (s *bareServer) target() *httpTarget {
	return &httpTarget{
		get: func(ctx context.Context, key string) (int, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+url.PathEscape(key), nil)
			if err != nil {
				return 0, err
			}
			resp, err := s.hc.Do(req)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return 0, fmt.Errorf("status %s", resp.Status)
			}
			if resp.ContentLength < 0 {
				return 0, errors.New("no Content-Length")
			}
			v := make([]byte, resp.ContentLength)
			n, err := io.ReadFull(resp.Body, v)
			return n, err
		},
		remote:     func(string) bool { return true },
		accepts:    s.ln.accepts.Load,
		peerErrors: func() int64 { return 0 },
		closeIdle:  s.tr.CloseIdleConnections,
		warmOwners: func(context.Context, []string) error { return nil }, // it has nothing to warm
	}
}

// checkRemoteLoads checks node A's count of values fetched from peers
// (peerLoads) for n Gets of fresh remote keys, wins of them won by a
// hedge: each key is fetched once at most, and a key not fetched was
// answered by a hedge that won. The two counts are not a partition: a
// fetch that answered just after its hedge published still counts as a
// peer load (so PeerLoads + HedgeWins may be over n on a loaded machine).
func checkRemoteLoads(n int, peerLoads, wins int64) error {
	if peerLoads > int64(n) || peerLoads+wins < int64(n) {
		return fmt.Errorf("node A fetched %d values from peers for %d fresh remote keys (%d hedges won)", peerLoads, n, wins)
	}
	return nil
}

// TestRemoteFetchHarness runs a short load against every system of
// BenchmarkRemoteFetch and checks that each answer is right, that the
// asked node really fetched remotely, and (through TestMain) that nothing
// leaks once the clusters are shut down.
func TestRemoteFetchHarness(t *testing.T) {
	const n = 4 * httpClients
	ours := newOurCluster(t, 3)
	gc := newGCCluster(t)
	round := &gc.a.round // fresh keys for groupcache's process-wide group
	targets := []struct {
		name string
		t    *httpTarget
		// remoteLoads is how many values the asked node fetched from
		// a peer (nil if the system has no such count).
		remoteLoads func() int64
	}{
		// PeerLoads alone: a hedge that won (a fetch slower than the
		// hedge delay, on a loaded machine) answered its key from node
		// A's source, and its fetch may or may not have been counted
		// too (checkRemoteLoads). The benchmarks report hedges/1k-req.
		{"geecache", ours.target(), func() int64 { return ours.nodes[0].group.Stats().PeerLoads }},
		{"groupcache", gc.target(), func() int64 { return gc.a.group.Stats.PeerLoads.Get() }},
		{"groupcache-tuned", gc.tunedTarget(), func() int64 { return gc.a.group.Stats.PeerLoads.Get() }},
		{"bare-nethttp", newBareServer(t).target(), nil},
	}
	for _, tg := range targets {
		var before int64
		if tg.remoteLoads != nil {
			before = tg.remoteLoads()
		}
		wins0 := ours.nodes[0].group.Stats().HedgeWins
		if tg.t.activate != nil {
			tg.t.activate()
		}
		keys := remoteKeys(tg.t, round, n)
		if err := tg.t.warmOwners(t.Context(), keys); err != nil {
			t.Fatalf("%s: warming the owners: %v", tg.name, err)
		}
		ownerLoads := ours.ownerLoads()
		gcServed := gc.a.group.Stats.ServerRequests.Get()
		res := httpLoad(tg.t, keys, httpClients, hitValueLen)
		if tg.name == "geecache" && ours.ownerLoads() != ownerLoads {
			t.Errorf("geecache: owners loaded %d keys after warming", ours.ownerLoads()-ownerLoads)
		}
		if res.failed > 0 {
			t.Errorf("%s: %d of %d requests failed; first: %v", tg.name, res.failed, n, res.firstErr)
		}
		if d := gc.a.group.Stats.ServerRequests.Get() - gcServed; d != 0 {
			t.Errorf("%s: groupcache's node A served %d requests: the owners forwarded them", tg.name, d)
		}
		if res.peerErrors != 0 {
			t.Errorf("%s: %d peer errors", tg.name, res.peerErrors)
		}
		switch {
		case tg.name == "geecache":
			if err := checkRemoteLoads(n, tg.remoteLoads()-before, ours.nodes[0].group.Stats().HedgeWins-wins0); err != nil {
				t.Errorf("%s: %v", tg.name, err)
			}
		case tg.remoteLoads != nil: // groupcache: no hedges
			if got := tg.remoteLoads() - before; got != n {
				t.Errorf("%s: %d remote loads for %d fresh remote keys, want %d", tg.name, got, n, n)
			}
		}
		t.Logf("%s: %d requests, %d new connections", tg.name, n, res.conns)
		tg.t.closeIdle()
	}
}
