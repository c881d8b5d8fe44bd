package nethttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leakOptions()...) }

// db is a Getter that answers "v:"+key for every key except those starting
// with "missing", and counts its calls per key.
type db struct {
	mu    sync.Mutex
	calls map[string]int
}

func (d *db) Get(ctx context.Context, key string) ([]byte, error) {
	d.mu.Lock()
	d.calls[key]++
	d.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(key) >= 7 && key[:7] == "missing" {
		return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
	}
	return []byte("v:" + key), nil
}

func (d *db) count(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[key]
}

// node is one cache node of a test cluster, served on a 127.0.0.1 port the
// OS picked.
type node struct {
	addr  string
	pool  *Pool
	group *cache.Group
	db    *db
	srv   *http.Server
	done  chan struct{}

	mu        sync.Mutex
	peerReqs  map[string]int // peer requests served, by key
	peerTotal int
}

// peerRequests returns how many peer requests for key the node served.
func (n *node) peerRequests(key string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.peerReqs[key]
}

// startNodes starts n nodes that all know each other (pass setPeers=false
// to leave the peer lists to the caller). Cleanup shuts them down.
func startNodes(t *testing.T, n int, setPeers bool, opts *PoolOptions) []*node {
	t.Helper()
	nodes := make([]*node, n)
	addrs := make([]string, n)
	lns := make([]net.Listener, n)
	for i := range nodes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ln
		addrs[i] = "http://" + ln.Addr().String()
	}
	for i := range nodes {
		nd := &node{addr: addrs[i], db: &db{calls: map[string]int{}}, peerReqs: map[string]int{}, done: make(chan struct{})}
		reg := cache.NewRegistry()
		var o PoolOptions
		if opts != nil {
			o = *opts
		}
		if o.Logger == nil {
			o.Logger = slog.New(slog.DiscardHandler)
		}
		var err error
		if nd.pool, err = NewPool(addrs[i], reg, &o); err != nil {
			t.Fatal(err)
		}
		if setPeers {
			mustSet(t, nd.pool, addrs...)
		}
		// No hedging: these clusters test who loads a key, and a hedge
		// on a loaded test machine would load it here too.
		g, err := reg.NewGroup("scores", 1<<20, nd.db, &cache.GroupOptions{Peers: nd.pool, Logger: slog.New(slog.DiscardHandler),
			PeerPolicy: cache.PeerPolicy{NoHedge: true}})
		if err != nil {
			t.Fatal(err)
		}
		nd.group = g
		nd.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get(protocol.HeaderPeer) != "" {
				_, key, _ := protocol.ParsePath(r.URL.EscapedPath())
				nd.mu.Lock()
				nd.peerReqs[key]++
				nd.peerTotal++
				nd.mu.Unlock()
			}
			nd.pool.ServeHTTP(w, r)
		})}
		go func(ln net.Listener) {
			defer close(nd.done)
			if err := nd.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("serve: %v", err)
			}
		}(lns[i])
		nodes[i] = nd
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			nd.kill()
		}
	})
	return nodes
}

// kill closes the node's listener and connections at once, as a crash
// would (from the peers' point of view), and waits for Serve to return.
// Its peer list is emptied, so that the background retries of its writes
// end at their next attempt instead of reaching a port another test may
// have been given since.
func (n *node) kill() {
	_ = n.srv.Close()
	<-n.done
	_ = n.pool.Set()
	_ = n.pool.Close()
}

// owner returns the node that owns key according to nodes[0]'s ring.
func owner(nodes []*node, key string) *node {
	a := nodes[0].pool.Owner(key)
	for _, n := range nodes {
		if n.addr == a {
			return n
		}
	}
	return nil
}

func mustClient(t testing.TB, addr string, o *ClientOptions) *Client {
	t.Helper()
	c, err := NewClient(addr, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustHandler(t testing.TB, reg *cache.Registry, o *handlerOptions) *handler {
	t.Helper()
	if o == nil {
		o = &handlerOptions{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := newHandler(reg, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustSet(t testing.TB, p *Pool, addrs ...string) {
	t.Helper()
	if err := p.Set(addrs...); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond for up to 10 s; a bound, not a timing assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
