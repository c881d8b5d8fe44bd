package nethttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// gatedNode is a node whose source blocks every load until the test opens
// its gate, on a 127.0.0.1 port the OS picked.
type gatedNode struct {
	addr  string
	pool  *Pool
	group *cache.Group
	loads atomic.Int64
}

// startGatedNodes starts n nodes with hedging on, the hedge delay at least
// hedge (and HedgeMax 30 s, the longest wait for an owner that is
// loading); their sources wait for gate to close.
func startGatedNodes(t *testing.T, n int, hedge time.Duration, gate <-chan struct{}) []*gatedNode {
	t.Helper()
	nodes := make([]*gatedNode, n)
	addrs := make([]string, n)
	lns := make([]net.Listener, n)
	for i := range nodes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i], addrs[i] = ln, "http://"+ln.Addr().String()
	}
	quiet := slog.New(slog.DiscardHandler)
	for i := range nodes {
		nd := &gatedNode{addr: addrs[i]}
		reg := cache.NewRegistry()
		pool, err := NewPool(addrs[i], reg, &PoolOptions{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		mustSet(t, pool, addrs...)
		src := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
			nd.loads.Add(1)
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if key[:1] == "m" {
				return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
			}
			return []byte("v:" + key), nil
		})
		g, err := reg.NewGroup("scores", 1<<20, src, &cache.GroupOptions{Peers: pool, Logger: quiet,
			PeerPolicy: cache.PeerPolicy{HedgeMin: hedge, HedgeMax: 30 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		nd.pool, nd.group = pool, g
		srv := &http.Server{Handler: pool}
		done := make(chan struct{})
		go func(ln net.Listener) {
			defer close(done)
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("serve: %v", err)
			}
		}(lns[i])
		t.Cleanup(func() {
			_ = srv.Close()
			<-done
			_ = pool.Close()
		})
		nodes[i] = nd
	}
	return nodes
}

// An owner that has to load from a slow source says so (102 Processing),
// and the nodes that asked wait for it instead of hedging: concurrent Gets
// of a cold key from every node load it once in the cluster, a present key
// and a missing one alike. The source is held for ten hedge delays, so
// without the owner's word every non-owner would hedge.
func TestSlowSourceBehindLiveOwnerLoadsOnce(t *testing.T) {
	const hedge = 100 * time.Millisecond
	for _, key := range []string{"present", "missing"} {
		t.Run(key, func(t *testing.T) {
			gate := make(chan struct{})
			nodes := startGatedNodes(t, 3, hedge, gate)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for i := range 9 {
				nd := nodes[i%3]
				wg.Go(func() {
					v, err := nd.group.Get(ctx, key)
					switch {
					case key == "present" && (err != nil || v.String() != "v:present"):
						t.Errorf("%s: Get = %q, %v", nd.addr, v, err)
					case key == "missing" && !errors.Is(err, getter.ErrNotFound):
						t.Errorf("%s: Get = %v; want ErrNotFound", nd.addr, err)
					}
				})
			}
			time.Sleep(10 * hedge) // time for any hedge to start (not a timing assertion)
			close(gate)
			wg.Wait()
			var loads, hedges int64
			for _, nd := range nodes {
				loads += nd.loads.Load()
				hedges += nd.group.Stats().Hedges
			}
			if loads != 1 || hedges != 0 {
				t.Fatalf("9 concurrent Gets of %q over 3 nodes: %d source loads, %d hedges; want 1 and 0", key, loads, hedges)
			}
		})
	}
}

// A missing key owned by a hung peer (as a SIGSTOPped node is: its kernel
// still accepts) is answered "not found" by the local load after the hedge
// delay, as a present key is its value, with the defaults: no fetch seen
// yet, no wait for the client's timeout. The fetches the hedges beat count
// as failures at SlowAfter and eject the peer.
func TestMissingKeyOfHungOwnerIsNotFoundAtOnce(t *testing.T) {
	hung, _ := startHungPeer(t)
	reg := cache.NewRegistry()
	pool, err := NewPool("", reg, &PoolOptions{Logger: slog.New(slog.DiscardHandler)}) // a client only: owns no key
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	mustSet(t, pool, hung.addr)
	g, err := reg.NewGroup("scores", 1<<20, &db{calls: map[string]int{}}, &cache.GroupOptions{Peers: pool,
		Logger: slog.New(slog.DiscardHandler), PeerPolicy: cache.PeerPolicy{SlowAfter: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	// A deadline far beyond the hedge delay: a Get that waited for the
	// owner would end with it, not with the local answer.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		if _, err := g.Get(ctx, fmt.Sprint("missing-", i)); !errors.Is(err, getter.ErrNotFound) {
			t.Fatalf("Get(missing-%d) = %v; want ErrNotFound from the local load", i, err)
		}
		if v, err := g.Get(ctx, fmt.Sprint("key-", i)); err != nil || v.String() != fmt.Sprint("v:key-", i) {
			t.Fatalf("Get(key-%d) = %q, %v", i, v, err)
		}
	}
	waitFor(t, "the ejection", func() bool { s := g.Stats(); return len(s.Peers) == 1 && s.Peers[0].Ejected })
	waitFor(t, "the fetches to end", func() bool { return g.Stats().Peers[0].InFlight == 0 })
}
