//go:build !js

package workers

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/examples/internal/hosttest"
	"github.com/geecache/geecache/internal/keytest"
)

// objects.mjs under workerd: three Durable Objects, each a GeeCache node
// reached through its stub, with the peer secret a binding. Asked through
// the front Worker, every node answers every key right (Tom → 630); each
// key is loaded once, by its owner on the ring, and every other node
// fetched it from the owner's object (0 fallbacks, 0 peer errors); every
// key of the key-escaping test goes from one object to another and back.
func TestDurableObjects(t *testing.T) {
	const nodes = 3 // NODES_COUNT in objects.capnp
	p := startWorkerd(t, "objects.capnp", []string{"objects.mjs", "../wasm/batch.mjs"}, func(string) []string {
		return []string{"GEECACHE_SECRET=objects secret"}
	})
	// The ring as the objects build it, to know each key's owner.
	ring, err := nethttp.NewPool("", cache.NewRegistry(), &nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	addrs := make([]string, nodes)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("http://geecache-node-%d", i)
	}
	if err := ring.Set(addrs...); err != nil {
		t.Fatal(err)
	}
	api := func(i int) string { return fmt.Sprintf("%s/node/%d", p.URL, i) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	data := hosttest.Dataset()
	keys := hosttest.ClusterKeys()
	owned := map[string]int{}
	for _, k := range keys {
		owned[ring.Owner(k)]++
	}
	for i := range nodes {
		if owned[addrs[i]] == 0 {
			t.Fatalf("%s owns none of the %d keys: the test needs each node to own some", addrs[i], len(keys))
		}
		for _, k := range keys {
			st, body, err := p.Get(ctx, api(i), hosttest.Scores, k)
			if err != nil || st != 200 || body != data[k] {
				t.Fatalf("node %d: %s = %d %q, %v; want 200 %q", i, k, st, body, err, data[k])
			}
		}
	}
	if st, body, err := p.Get(ctx, api(0), hosttest.Scores, "kkk"); err != nil || st != 404 || body != "kkk not exist" {
		t.Errorf("node 0: kkk = %d %q, %v; want 404 %q", st, body, err, "kkk not exist")
	}
	for i := range nodes {
		r, err := p.Stats(ctx, api(i))
		if err != nil {
			t.Fatal(err)
		}
		s, mine := r.Stats, owned[addrs[i]]
		t.Logf("node %d owns %d of %d keys; its stats: %+v", i, mine, len(keys), s)
		if r.Self != addrs[i] {
			t.Errorf("node %d says it is %s; want %s", i, r.Self, addrs[i])
		}
		if s.FallbackLoads != 0 || s.PeerErrors != 0 {
			t.Errorf("node %d: %d fallback loads, %d peer errors; want 0 and 0", i, s.FallbackLoads, s.PeerErrors)
		}
		if want := int64(len(keys) - mine); s.PeerLoads != want {
			t.Errorf("node %d: %d peer loads; want %d (the keys it does not own)", i, s.PeerLoads, want)
		}
		if want := int64((nodes - 1) * mine); s.PeerRequests != want {
			t.Errorf("node %d served %d peer requests; want %d (each of its keys, to each other node)", i, s.PeerRequests, want)
		}
		for _, k := range keys {
			want := map[bool]int{true: 1}[ring.Owner(k) == addrs[i]]
			if got := r.Lookups[k]; got != want {
				t.Errorf("node %d loaded %s %d times; want %d (owner %s)", i, k, got, want, ring.Owner(k))
			}
		}
	}

	// Every key a JavaScript string holds, asked of node 0, whose group
	// echo asks the other nodes for every key, crosses a stub both ways as
	// itself.
	sent := 0
	for i, k := range keytest.Keys(rand.New(rand.NewPCG(20, 2)), 100) {
		if !utf8.ValidString(k) {
			continue
		}
		sent++
		st, body, err := p.Get(ctx, api(0), hosttest.Echo, k)
		if err != nil || st != 200 || body != "v="+k {
			t.Fatalf("key #%d %q from node 0 = %d %q, %v; want 200 %q", i, k, st, body, err, "v="+k)
		}
	}
	if st, _, err := p.Get(ctx, api(0), hosttest.Echo, hosttest.EchoMissing); err != nil || st != 404 {
		t.Errorf("the missing key = %d, %v; want 404", st, err)
	}
	t.Logf("%d keys through the stubs", sent)
}

// 16 requests at once to node 0 for a key node 1 owns, its database slow:
// node 0 fetches it once through node 1's stub and every request gets it.
func TestDurableObjectsConcurrentRequests(t *testing.T) {
	p := startWorkerd(t, "objects.capnp", []string{"objects.mjs", "../wasm/batch.mjs"}, func(string) []string {
		return []string{"GEECACHE_SECRET=objects secret", "GEECACHE_DELAY=300ms"}
	})
	key := hosttest.KeyOwnedBy(t, "http://geecache-node-1", "http://geecache-node-0", "http://geecache-node-1", "http://geecache-node-2")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node0 := hosttest.Node{Proc: p, API: p.URL + "/node/0"}
	r := hosttest.Concurrent(t, ctx, node0, hosttest.Scores, key, hosttest.Dataset()[key], 16)
	if r.Stats.DedupWaits == 0 || r.Stats.PeerLoads != 1 || r.Stats.FallbackLoads != 0 {
		t.Errorf("node 0: %d waits for the one fetch, %d peer loads, %d fallbacks; want > 0, 1, 0", r.Stats.DedupWaits, r.Stats.PeerLoads, r.Stats.FallbackLoads)
	}
	r1, err := p.Stats(ctx, p.URL+"/node/1")
	if err != nil {
		t.Fatal(err)
	}
	if r1.Lookups[key] != 1 {
		t.Errorf("node 1 looked %s up %d times; want 1", key, r1.Lookups[key])
	}
}
