//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// startCluster starts n nodes without hedging (these clusters test who
// loads a key, and a hedge on a loaded test machine would load it here
// too), with sources that count their loads and a transport that counts
// the peer requests.
func startCluster(t *testing.T, n int, po nethttp.PoolOptions) ([]*nethttptest.Node, *loads, *countingTransport) {
	t.Helper()
	src, rt := &loads{}, newCountingTransport(t)
	po.Transport = rt
	nodes := nethttptest.Start(t, n, &nethttptest.Options{Getter: src.getter, PoolOptions: po,
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	return nodes, src, rt
}

func TestClusterEveryKeyFromAnyNode(t *testing.T) {
	nodes, src, rt := startCluster(t, 3, nethttp.PoolOptions{})
	ctx := context.Background()
	keys := make([]string, 60)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	owned := map[*nethttptest.Node]int{}
	for _, k := range keys {
		owned[nodes[0].Owner(k)]++
	}
	if len(owned) != 3 {
		t.Fatalf("60 keys spread over %d nodes; want all 3 to own some", len(owned))
	}

	for round := range 3 {
		for _, n := range nodes {
			for _, k := range keys {
				v, err := n.Group.Get(ctx, k)
				if err != nil || v.String() != "v:"+k {
					t.Fatalf("round %d: %s Get(%q) = %q, %v", round, n.Addr, k, v.String(), err)
				}
			}
		}
		if round == 0 {
			continue
		}
		// Rounds after the first are answered from memory: the hot cache
		// takes the repeated remote hits, so owners see no new peer requests.
		for _, n := range nodes {
			for _, k := range keys {
				var want int64
				if nodes[0].Owner(k) == n {
					want = 2 // one from each other node, in round 0 only
				}
				if got := rt.toFor(n.Addr, k); got != want {
					t.Fatalf("round %d: %s served %d peer requests for %q; want %d", round, n.Addr, got, k, want)
				}
			}
		}
	}
	for i, n := range nodes {
		for _, k := range keys {
			want := 0
			if nodes[0].Owner(k) == n {
				want = 1
			}
			if got := src.count(i, k); got != want {
				t.Errorf("%s loaded %q %d times; want %d (owner %s)", n.Addr, k, got, want, nodes[0].Owner(k).Addr)
			}
		}
		st := n.Group.Stats()
		if st.Hot.Hits == 0 || st.FallbackLoads != 0 || st.PeerErrors != 0 {
			t.Errorf("%s stats: %+v; want hot hits and no peer errors", n.Addr, st)
		}
	}
}

func TestClusterNotFoundCrossesTheHop(t *testing.T) {
	nodes, src, _ := startCluster(t, 3, nethttp.PoolOptions{})
	var key string
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("missing-%d", i); nodes[0].Owner(k) != nodes[0] {
			key = k
		}
	}
	_, err := nodes[0].Group.Get(context.Background(), key)
	if !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("Get(%q) = %v; want ErrNotFound", key, err)
	}
	o := slices.Index(nodes, nodes[0].Owner(key))
	if src.count(0, key) != 0 || src.count(o, key) != 1 {
		t.Fatalf("not-found key loaded %d times here, %d on its owner; want 0 and 1 (no fallback)",
			src.count(0, key), src.count(o, key))
	}
}

func TestClusterAwkwardKeys(t *testing.T) {
	keys := []string{"", "a b", "a/b", "/", "a%2Fb", "%", "100%", "a?b=c", "a#frag", "a+b",
		"ключ", "日本語", "..", "tab\tnl\n", "semi;colon"}
	for _, auth := range []bool{false, true} {
		t.Run(fmt.Sprintf("auth=%v", auth), func(t *testing.T) {
			var opts nethttp.PoolOptions
			if auth {
				opts.Cluster.Secret = []byte("k")
			}
			nodes, src, _ := startCluster(t, 3, opts)
			remote := 0
			for _, n := range nodes {
				for _, k := range keys {
					v, err := n.Group.Get(context.Background(), k)
					if err != nil || v.String() != "v:"+k {
						t.Errorf("%s Get(%q) = %q, %v", n.Addr, k, v.String(), err)
					}
					if nodes[0].Owner(k) != n {
						remote++
					}
				}
			}
			for _, k := range keys {
				if got := src.count(slices.Index(nodes, nodes[0].Owner(k)), k); got != 1 {
					t.Errorf("owner loaded %q %d times; want 1 (the key got mangled on the way?)", k, got)
				}
			}
			if remote == 0 {
				t.Fatal("no key went over the wire")
			}
		})
	}
}

// After a Remove or a Set on any node, a Get on every node returns the new
// state, and the source is read once, at the owner.
func TestRemoveAndSetAcrossTheCluster(t *testing.T) {
	nodes, src, _ := startCluster(t, 3, nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte("k")}})
	ctx := t.Context()
	key := "Tom"
	own := nodes[0].Owner(key)
	ownIdx := slices.Index(nodes, own)
	readAll := func(want string) {
		t.Helper()
		for _, n := range nodes {
			if v, err := n.Group.Get(ctx, key); err != nil || v.String() != want {
				t.Fatalf("%s: Get = %q, %v; want %q", n.Addr, v, err, want)
			}
		}
	}
	readAll("v:Tom")
	for i, from := range nodes {
		if err := from.Group.Set(ctx, key, []byte("set-by-"+from.Addr), 0); err != nil {
			t.Fatalf("Set from node %d: %v", i, err)
		}
		readAll("set-by-" + from.Addr)
		before := src.count(ownIdx, key)
		if err := from.Group.Remove(ctx, key); err != nil {
			t.Fatalf("Remove from node %d: %v", i, err)
		}
		readAll("v:Tom")
		if got := src.count(ownIdx, key) - before; got != 1 {
			t.Fatalf("after a Remove from node %d the owner read the source %d times; want 1", i, got)
		}
	}
	for j, n := range nodes {
		if n != own && src.count(j, key) != 0 {
			t.Fatalf("%s read the source for a key it does not own", n.Addr)
		}
	}
	// A node that is gone is reported, and the others still change.
	gone := nodes[0]
	if gone == own {
		gone = nodes[1]
	}
	gone.SetFault(nethttptest.Fault{Down: true})
	var from *nethttptest.Node
	for _, n := range nodes {
		if n != gone {
			from = n
			break
		}
	}
	err := from.Group.Remove(ctx, key)
	var ue *cache.UpdateError
	if !errors.As(err, &ue) || len(ue.Failed) != 1 || ue.Failed[gone.Addr] == nil {
		t.Fatalf("Remove with %s down: %v; want an UpdateError naming it", gone.Addr, err)
	}
}
