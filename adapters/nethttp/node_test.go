//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// listenPair starts two nodes with Listen on 127.0.0.1 ports the OS picks,
// each with a group "scores" whose source is src.getter(i), and sets both
// peer lists to both URLs. o is each node's options (nil: quiet
// defaults). The test closes the nodes itself.
func listenPair(t *testing.T, src *loads, o *nethttp.NodeOptions) ([2]*nethttp.Node, [2]*cache.Group) {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	if o == nil {
		o = &nethttp.NodeOptions{}
	}
	if o.Pool.Logger == nil {
		o.Pool.Logger = quiet
	}
	var nodes [2]*nethttp.Node
	var groups [2]*cache.Group
	for i := range nodes {
		reg := cache.NewRegistry()
		n, err := nethttp.Listen("127.0.0.1:0", reg, o)
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = n
		if groups[i], err = reg.NewGroup("scores", 1<<20, src.getter(i), &cache.GroupOptions{Peers: n.Pool(), Logger: quiet,
			PeerPolicy: cache.PeerPolicy{NoHedge: true}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		if err := n.Pool().Set(nodes[0].URL(), nodes[1].URL()); err != nil {
			t.Fatal(err)
		}
	}
	return nodes, groups
}

// ownedByNode returns n keys, prefix plus a number, that node owns.
func ownedByNode(node *nethttp.Node, prefix string, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if k := fmt.Sprint(prefix, i); node.Pool().Owner(k) == node.URL() {
			keys = append(keys, k)
		}
	}
	return keys
}

// refused reports whether nothing listens at the node's URL any more.
func refused(n *nethttp.Node) bool {
	c, err := net.Dial("tcp", strings.TrimPrefix(n.URL(), "http://"))
	if err == nil {
		_ = c.Close()
	}
	return err != nil
}

// Two nodes started with Listen on ports the OS picks know their own URLs
// and reach each other: each key is loaded once, by its owner, whichever
// node is asked. Close stops each node, without a drain although DrainFor
// is an hour, and leaves no goroutine behind.
func TestListenTwoNodes(t *testing.T) {
	nethttp.NoLeaks(t)
	var src loads
	nodes, groups := listenPair(t, &src, &nethttp.NodeOptions{Pool: nethttp.PoolOptions{DrainFor: time.Hour}})
	for i, n := range nodes {
		if u := n.URL(); !strings.HasPrefix(u, "http://127.0.0.1:") || strings.HasSuffix(u, ":0") || n.Pool().Self() != u {
			t.Errorf("node %d URL %q (Pool.Self %q); want http://127.0.0.1: and the port the OS picked", i, u, n.Pool().Self())
		}
	}
	ctx := context.Background()
	for owner := range nodes {
		for _, k := range ownedByNode(nodes[owner], "key-", 5) {
			for asked, g := range groups {
				if v, err := g.Get(ctx, k); err != nil || v.String() != "v:"+k {
					t.Fatalf("node %d Get(%s) = %q, %v", asked, k, v, err)
				}
			}
			if src.count(owner, k) != 1 || src.count(1-owner, k) != 0 {
				t.Errorf("%s: loaded %d times by its owner (node %d), %d by the other; want 1 and 0", k, src.count(owner, k), owner, src.count(1-owner, k))
			}
		}
	}
	if s := groups[0].Stats(); s.PeerLoads == 0 {
		t.Error("node 0 fetched nothing from node 1")
	}
	for i, n := range nodes {
		if err := n.Close(); err != nil {
			t.Errorf("node %d Close = %v", i, err)
		}
		if !refused(n) {
			t.Errorf("node %d still listens after Close", i)
		}
		if err := n.Close(); err != nil {
			t.Errorf("node %d second Close = %v", i, err)
		}
		if s := groups[i].Stats(); s.Offered != 0 {
			t.Errorf("node %d offered %d keys at Close; want none (it does not drain)", i, s.Offered)
		}
	}
}

// Node.Drain, once the node has left the other's ring, offers its keys,
// then stops the node; with its context ended first, it stops the
// node at once and says so.
func TestListenDrain(t *testing.T) {
	nethttp.NoLeaks(t)
	var src loads
	// The drain is long enough for the offer's 20 keys on a machine
	// loaded by -race; it ends by itself, and its length is not measured.
	nodes, groups := listenPair(t, &src, &nethttp.NodeOptions{Pool: nethttp.PoolOptions{DrainFor: 2 * time.Second}})
	ctx := context.Background()
	held := ownedByNode(nodes[1], "key-", 20)
	for _, k := range held {
		if _, err := groups[1].Get(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := nodes[0].Pool().Set(nodes[0].URL()); err != nil { // node 1 leaves node 0's ring
		t.Fatal(err)
	}
	if err := nodes[1].Drain(ctx); err != nil {
		t.Fatalf("Drain = %v", err)
	}
	if !refused(nodes[1]) {
		t.Error("node 1 still listens after Drain")
	}
	if s := groups[1].Stats(); s.Offered != int64(len(held)) {
		t.Errorf("the draining node offered %d keys; want its %d", s.Offered, len(held))
	}
	if s := groups[0].Stats(); s.TakenOver != int64(len(held)) {
		t.Errorf("its peer took %d keys over; want %d", s.TakenOver, len(held))
	}
	if err := nodes[0].Close(); err != nil {
		t.Fatal(err)
	}

	reg := cache.NewRegistry()
	n, err := nethttp.Listen("127.0.0.1:0", reg, &nethttp.NodeOptions{Pool: nethttp.PoolOptions{DrainFor: time.Hour, Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	cut, cancel := context.WithCancel(ctx)
	cancel()
	err = n.Drain(cut)
	onePrefix(t, "Drain with a cancelled context", err)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Drain with a cancelled context = %v; want context.Canceled", err)
	}
	if !refused(n) {
		t.Error("the node still listens after a Drain cut short")
	}
}

// Listen knows its URL only from a host the peers can use: an address
// that listens on every interface needs NodeOptions.Self, which then is
// the node's URL; options that cannot work and an address in use fail.
func TestListenErrors(t *testing.T) {
	nethttp.NoLeaks(t)
	quiet := &nethttp.NodeOptions{Pool: nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)}}
	for _, addr := range []string{":0", "0.0.0.0:0"} {
		_, err := nethttp.Listen(addr, cache.NewRegistry(), quiet)
		if !errors.Is(err, cache.ErrConfig) || !strings.Contains(err.Error(), "NodeOptions.Self") {
			t.Errorf("Listen(%q) = %v; want ErrConfig naming NodeOptions.Self", addr, err)
		}
		onePrefix(t, "Listen on every interface", err)
	}
	withSelf := *quiet
	withSelf.Self = "http://Cache-1.internal:80/"
	n, err := nethttp.Listen(":0", cache.NewRegistry(), &withSelf)
	if err != nil {
		t.Fatal(err)
	}
	if n.URL() != "http://cache-1.internal" {
		t.Errorf("URL with Self = %q; want it normalised, http://cache-1.internal", n.URL())
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	bad := *quiet
	bad.Pool.DrainFor = -1
	if _, err := nethttp.Listen("127.0.0.1:0", cache.NewRegistry(), &bad); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("Listen with a negative DrainFor = %v; want ErrConfig", err)
	}

	n, err = nethttp.Listen("127.0.0.1:0", cache.NewRegistry(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	_, err = nethttp.Listen(strings.TrimPrefix(n.URL(), "http://"), cache.NewRegistry(), quiet)
	onePrefix(t, "Listen on an address in use", err)
	if errors.Is(err, cache.ErrConfig) {
		t.Errorf("Listen on an address in use = %v; want the listener's error, not ErrConfig", err)
	}
}
