package nethttp

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/geecache/geecache/getter"
)

func TestClusterEveryKeyFromAnyNode(t *testing.T) {
	nodes := startNodes(t, 3, true, nil)
	ctx := context.Background()
	keys := make([]string, 60)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	owned := map[*node]int{}
	for _, k := range keys {
		owned[owner(nodes, k)]++
	}
	if len(owned) != 3 {
		t.Fatalf("60 keys spread over %d nodes; want all 3 to own some", len(owned))
	}

	for round := range 3 {
		for _, n := range nodes {
			for _, k := range keys {
				v, err := n.group.Get(ctx, k)
				if err != nil || v.String() != "v:"+k {
					t.Fatalf("round %d: %s Get(%q) = %q, %v", round, n.addr, k, v.String(), err)
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
				want := 0
				if owner(nodes, k) == n {
					want = 2 // one from each other node, in round 0 only
				}
				if got := n.peerRequests(k); got != want {
					t.Fatalf("round %d: %s served %d peer requests for %q; want %d", round, n.addr, got, k, want)
				}
			}
		}
	}
	for _, n := range nodes {
		for _, k := range keys {
			want := 0
			if owner(nodes, k) == n {
				want = 1
			}
			if got := n.db.count(k); got != want {
				t.Errorf("%s loaded %q %d times; want %d (owner %s)", n.addr, k, got, want, owner(nodes, k).addr)
			}
		}
		st := n.group.Stats()
		if st.Hot.Hits == 0 || st.FallbackLoads != 0 || st.PeerErrors != 0 {
			t.Errorf("%s stats: %+v; want hot hits and no peer errors", n.addr, st)
		}
	}
}

func TestClusterNotFoundCrossesTheHop(t *testing.T) {
	nodes := startNodes(t, 3, true, nil)
	var key string
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("missing-%d", i); owner(nodes, k) != nodes[0] {
			key = k
		}
	}
	_, err := nodes[0].group.Get(context.Background(), key)
	if !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("Get(%q) = %v; want ErrNotFound", key, err)
	}
	if nodes[0].db.count(key) != 0 || owner(nodes, key).db.count(key) != 1 {
		t.Fatalf("not-found key loaded %d times here, %d on its owner; want 0 and 1 (no fallback)",
			nodes[0].db.count(key), owner(nodes, key).db.count(key))
	}
}

func TestClusterAwkwardKeys(t *testing.T) {
	keys := []string{"", "a b", "a/b", "/", "a%2Fb", "%", "100%", "a?b=c", "a#frag", "a+b",
		"ключ", "日本語", "..", "tab\tnl\n", "semi;colon"}
	for _, auth := range []bool{false, true} {
		t.Run(fmt.Sprintf("auth=%v", auth), func(t *testing.T) {
			opts := &PoolOptions{}
			if auth {
				opts.Cluster.Secret = []byte("k")
			}
			nodes := startNodes(t, 3, true, opts)
			remote := 0
			for _, n := range nodes {
				for _, k := range keys {
					v, err := n.group.Get(context.Background(), k)
					if err != nil || v.String() != "v:"+k {
						t.Errorf("%s Get(%q) = %q, %v", n.addr, k, v.String(), err)
					}
					if owner(nodes, k) != n {
						remote++
					}
				}
			}
			for _, k := range keys {
				if got := owner(nodes, k).db.count(k); got != 1 {
					t.Errorf("owner loaded %q %d times; want 1 (the key got mangled on the way?)", k, got)
				}
			}
			if remote == 0 {
				t.Fatal("no key went over the wire")
			}
		})
	}
}
