package nethttp

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/clocktest"
)

// After a Remove or a Set on any node, a Get on every node returns the new
// state, and the source is read once, at the owner.
func TestRemoveAndSetAcrossTheCluster(t *testing.T) {
	nodes := startNodes(t, 3, true, &PoolOptions{Cluster: Cluster{Secret: []byte("k")}})
	ctx := t.Context()
	key := "Tom"
	own := owner(nodes, key)
	readAll := func(want string) {
		t.Helper()
		for _, n := range nodes {
			if v, err := n.group.Get(ctx, key); err != nil || v.String() != want {
				t.Fatalf("%s: Get = %q, %v; want %q", n.addr, v, err, want)
			}
		}
	}
	readAll("v:Tom")
	for i, from := range nodes {
		if err := from.group.Set(ctx, key, []byte("set-by-"+from.addr), 0); err != nil {
			t.Fatalf("Set from node %d: %v", i, err)
		}
		readAll("set-by-" + from.addr)
		before := own.db.count(key)
		if err := from.group.Remove(ctx, key); err != nil {
			t.Fatalf("Remove from node %d: %v", i, err)
		}
		readAll("v:Tom")
		if got := own.db.count(key) - before; got != 1 {
			t.Fatalf("after a Remove from node %d the owner read the source %d times; want 1", i, got)
		}
	}
	for _, n := range nodes {
		if n != own && n.db.count(key) != 0 {
			t.Fatalf("%s read the source for a key it does not own", n.addr)
		}
	}
	// A node that is gone is reported, and the others still change.
	gone := nodes[0]
	if gone == own {
		gone = nodes[1]
	}
	gone.kill()
	var from *node
	for _, n := range nodes {
		if n != gone {
			from = n
			break
		}
	}
	err := from.group.Remove(ctx, key)
	var ue *cache.UpdateError
	if !errors.As(err, &ue) || len(ue.Failed) != 1 || ue.Failed[gone.addr] == nil {
		t.Fatalf("Remove with %s down: %v; want an UpdateError naming it", gone.addr, err)
	}
}

// The owner's TTL travels as a remaining lifetime, so a node whose clock
// is an hour off keeps its copy exactly as long as the owner does.
func TestTTLAcrossSkewedClocks(t *testing.T) {
	ownerClock := clocktest.New(time.Unix(1_700_000_000, 0))
	askerClock := clocktest.New(ownerClock.Now().Add(time.Hour)) // an hour ahead
	var loads atomic.Int64
	src := getter.TTLFunc(func(_ context.Context, key string) ([]byte, time.Duration, error) {
		loads.Add(1)
		return []byte("v:" + key), time.Minute, nil
	})
	lns := [2]net.Listener{}
	addrs := make([]string, 2)
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i], addrs[i] = ln, "http://"+ln.Addr().String()
	}
	groups := make([]*cache.Group, 2)
	for i, clock := range []*clocktest.Clock{ownerClock, askerClock} {
		reg := cache.NewRegistry()
		self := addrs[0] // node 0 owns every key; node 1 is a client of it
		if i == 1 {
			self = ""
		}
		pool, err := NewPool(self, reg, &PoolOptions{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		if i == 1 {
			mustSet(t, pool, addrs[0])
		}
		g, err := reg.NewGroup("scores", 1<<20, src, &cache.GroupOptions{Peers: pool, Logger: slog.New(slog.DiscardHandler),
			Now: clock.Now, PeerPolicy: cache.PeerPolicy{NoHedge: true}})
		if err != nil {
			t.Fatal(err)
		}
		groups[i] = g
		srv := NewServer("", pool, nil)
		done := make(chan struct{})
		go func(ln net.Listener) { defer close(done); _ = srv.Serve(ln) }(lns[i])
		defer func() { _ = srv.Close(); <-done }()
	}
	ctx := t.Context()
	get := func() {
		t.Helper()
		if v, err := groups[1].Get(ctx, "k"); err != nil || v.String() != "v:k" {
			t.Fatalf("Get = %q, %v", v, err)
		}
	}
	get() // fetched from the owner, with 1m to live
	ownerClock.Add(59 * time.Second)
	askerClock.Add(59 * time.Second)
	get()
	if s := groups[1].Stats(); s.PeerLoads != 1 || loads.Load() != 1 {
		t.Fatalf("59 s later: %d peer loads, %d source loads; want the copy still fresh", s.PeerLoads, loads.Load())
	}
	ownerClock.Add(2 * time.Second)
	askerClock.Add(2 * time.Second)
	get()
	if s := groups[1].Stats(); s.PeerLoads != 2 || loads.Load() != 2 {
		t.Fatalf("61 s later: %d peer loads, %d source loads; want the copy expired with the owner's", s.PeerLoads, loads.Load())
	}
}
