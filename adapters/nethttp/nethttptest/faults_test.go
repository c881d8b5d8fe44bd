//go:build !js

package nethttptest_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/geecache/geecache/internal/peertest"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// noHedge leaves hedging off: these tests count who loads a key, and a
// hedge on a loaded test machine would load it on the asking node too.
func noHedge() *nethttptest.Options {
	return &nethttptest.Options{GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}}
}

// keyOf returns a key (prefix plus a number) that owner owns.
func keyOf(t *testing.T, owner *nethttptest.Node, prefix string) string {
	t.Helper()
	for i := range 10000 {
		if k := fmt.Sprint(prefix, i); owner.Owner(k) == owner {
			return k
		}
	}
	t.Fatalf("no key owned by %s", owner.Addr)
	return ""
}

func mustGet(t *testing.T, g *cache.Group, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if v, err := g.Get(ctx, key); err != nil || v.String() != "v:"+key {
		t.Fatalf("Get(%q) = %q, %v; want %q", key, v, err, "v:"+key)
	}
}

// Every node agrees on each key's owner, a present key is fetched from
// its owner, and a missing one is "not found" from every node.
func TestClusterPresentAndMissing(t *testing.T) {
	t.Parallel()
	nodes := nethttptest.Start(t, 3, noHedge())
	for i := range 50 {
		k := fmt.Sprint("k", i)
		o := nodes[0].Owner(k)
		if o == nil {
			t.Fatalf("no owner for %q", k)
		}
		for _, n := range nodes[1:] {
			if n.Owner(k) != o {
				t.Fatalf("%s and %s disagree on the owner of %q", nodes[0].Addr, n.Addr, k)
			}
		}
	}
	a, b := nodes[0], nodes[1]
	k := keyOf(t, b, "k")
	mustGet(t, a.Group, k)
	if s := a.Group.Stats(); s.PeerLoads != 1 || s.LocalLoads != 0 {
		t.Fatalf("a's stats after a Get of b's key: %+v; want one peer load", s)
	}
	if s := b.Group.Stats(); s.LocalLoads != 1 {
		t.Fatalf("b's stats: %+v; want one local load", s)
	}
	m := keyOf(t, b, "missing")
	if _, err := a.Group.Get(context.Background(), m); !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("Get(%q) = %v; want ErrNotFound", m, err)
	}
}

// A hung node: a Get from another node is answered by the hedge, and the
// hung node is ejected.
func TestFaultHang(t *testing.T) {
	t.Parallel()
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{
		EjectAfter: 3, EjectFor: time.Hour, HedgeMin: time.Millisecond, HedgeMax: time.Millisecond, SlowAfter: 50 * time.Millisecond}}})
	a, b := nodes[0], nodes[1]
	b.SetFault(nethttptest.Fault{Hang: true})
	deadline := time.Now().Add(10 * time.Second) // a bound, not a timing assertion
	for i := 0; ; i++ {
		s := a.Group.Stats()
		if len(s.Peers) > 0 && s.Peers[0].Ejected {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hung node was not ejected: %+v", s)
		}
		mustGet(t, a.Group, keyOf(t, b, fmt.Sprint("h", i, "-")))
		time.Sleep(time.Millisecond)
	}
	if s := a.Group.Stats(); s.Hedges == 0 || s.PeerLoads != 0 || s.PeerErrors != 0 {
		t.Fatalf("a's stats: %+v; want every Get answered by a hedge", s)
	}
}

// A node that is down refuses connections; its keys are loaded by the
// node that asked. Back up, it serves on the same address.
func TestFaultDown(t *testing.T) {
	t.Parallel()
	nodes := nethttptest.Start(t, 2, noHedge())
	a, b := nodes[0], nodes[1]
	b.SetFault(nethttptest.Fault{Down: true})
	_, err := net.Dial("tcp", b.Addr[len("http://"):])
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial a down node: %v; want connection refused", err)
	}
	k := keyOf(t, b, "d")
	mustGet(t, a.Group, k)
	if s := a.Group.Stats(); s.FallbackLoads != 1 || s.PeerLoads != 0 {
		t.Fatalf("a's stats: %+v; want one fallback load", s)
	}
	b.SetFault(nethttptest.Fault{})
	c, err := nethttp.NewClient(b.Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if v, _, err := peertest.Get(context.Background(), c, "scores", k); err != nil || string(v) != "v:"+k {
		t.Fatalf("back up: Get(%q) = %q, %v", k, v, err)
	}
}

// A lying node's answer fails the integrity check: a client gets
// ErrIntegrity, and a node falls back to its own source, never returning
// the lie.
func TestFaultLie(t *testing.T) {
	t.Parallel()
	nodes := nethttptest.Start(t, 2, noHedge())
	a, b := nodes[0], nodes[1]
	b.SetFault(nethttptest.Fault{Lie: true})
	k := keyOf(t, b, "l")
	c, err := nethttp.NewClient(b.Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if v, _, err := peertest.Get(context.Background(), c, "scores", k); !errors.Is(err, cache.ErrIntegrity) {
		t.Fatalf("Get from a lying node = %q, %v; want ErrIntegrity", v, err)
	}
	mustGet(t, a.Group, k)
	if s := a.Group.Stats(); s.FallbackLoads != 1 {
		t.Fatalf("a's stats: %+v; want one fallback load", s)
	}
}

// A slow node answers, after its delay: not within a context much
// shorter than it, and correctly within one much longer.
func TestFaultSlow(t *testing.T) {
	t.Parallel()
	nodes := nethttptest.Start(t, 1, noHedge())
	n := nodes[0]
	c, err := nethttp.NewClient(n.Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	n.SetFault(nethttptest.Fault{Delay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := peertest.Get(ctx, c, "scores", "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get from a node an hour slow: %v; want DeadlineExceeded", err)
	}
	n.SetFault(nethttptest.Fault{Delay: time.Millisecond})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	if v, _, err := peertest.Get(ctx2, c, "scores", "k"); err != nil || string(v) != "v:k" {
		t.Fatalf("Get from a slow node = %q, %v", v, err)
	}
}

// A partitioned node is cut off both ways: the others load its keys
// themselves, it loads theirs itself, and it still serves a client from
// outside the cluster.
func TestFaultPartitioned(t *testing.T) {
	t.Parallel()
	nodes := nethttptest.Start(t, 2, noHedge())
	a, b := nodes[0], nodes[1]
	b.SetFault(nethttptest.Fault{Partitioned: true})
	kb, ka := keyOf(t, b, "p"), keyOf(t, a, "p")
	mustGet(t, a.Group, kb)
	mustGet(t, b.Group, ka)
	if s := a.Group.Stats(); s.FallbackLoads != 1 || s.PeerLoads != 0 {
		t.Fatalf("a's stats: %+v; want one fallback load", s)
	}
	if s := b.Group.Stats(); s.FallbackLoads != 1 || s.PeerRequests != 0 {
		t.Fatalf("b's stats: %+v; want one fallback load and no peer request served", s)
	}
	c, err := nethttp.NewClient(b.Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if v, _, err := peertest.Get(context.Background(), c, "scores", kb); err != nil || string(v) != "v:"+kb {
		t.Fatalf("a client outside the cluster: Get(%q) = %q, %v", kb, v, err)
	}
}

// Clusters started by parallel tests do not share anything: each one's
// counts are its own, and faults in one do not reach another.
func TestParallelClusters(t *testing.T) {
	t.Parallel()
	for i := range 6 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			nodes := nethttptest.Start(t, 3, noHedge())
			a, b := nodes[0], nodes[1]
			if i%2 == 1 {
				nodes[2].SetFault(nethttptest.Fault{Down: true})
			}
			for j := range 20 {
				mustGet(t, a.Group, keyOf(t, b, fmt.Sprint("c", j, "-")))
			}
			if s := a.Group.Stats(); s.PeerLoads != 20 || s.FallbackLoads != 0 {
				t.Fatalf("a's stats: %+v; want 20 peer loads", s)
			}
		})
	}
}

// PerNode is called once for each node, with that node's options (its
// Pool as the Peers), before its group is made.
func TestPerNode(t *testing.T) {
	t.Parallel()
	peers := map[int]cache.PeerPicker{}
	nodes := nethttptest.Start(t, 3, &nethttptest.Options{PerNode: func(i int, o *cache.GroupOptions) { peers[i] = o.Peers }})
	if len(peers) != 3 {
		t.Fatalf("PerNode called for %d nodes; want 3", len(peers))
	}
	for i, n := range nodes {
		if peers[i] != n.Pool {
			t.Errorf("PerNode(%d) got Peers %v; want node %d's Pool", i, peers[i], i)
		}
	}
}
