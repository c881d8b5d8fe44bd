//go:build !js

package hosttest

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/keytest"
	"github.com/geecache/geecache/internal/peertest"
)

// Node is a wasm node as the checks see it.
type Node struct {
	Proc *Proc
	API  string // the base URL of its /api and /stats; "": Proc.URL
	Addr string // its address in the ring, as the natives' pools hold it; "": a client that owns nothing
}

// ClusterKeys are the keys Cluster asks for: the tutorial's three scores and
// 60 generated keys, enough that each of three nodes owns some.
func ClusterKeys() []string {
	ks := []string{"Tom", "Jack", "Sam"}
	for i := range 60 {
		ks = append(ks, Key(i))
	}
	return ks
}

// Cluster checks the wasm node w among natives, whose pools hold every
// node (w.Addr included, if any): w answers every key of ClusterKeys
// right (Tom → 630) and a missing one as missing; it fetched each key it
// does not own from its owner with 0 fallbacks and 0 peer errors; each
// native fetched each key w owns from w (w serves its peers); and each key
// was loaded once in the cluster, by its owner.
func Cluster(t *testing.T, ctx context.Context, w Node, natives []*Native) {
	t.Helper()
	data := Dataset()
	keys := ClusterKeys()
	owned := 0
	for _, k := range keys {
		if natives[0].Pool.Owner(k) == w.Addr {
			owned++
		}
	}
	if w.Addr != "" && owned == 0 {
		t.Fatalf("%s owns none of the %d keys: the test needs it to own some", w.Addr, len(keys))
	}
	for _, k := range keys {
		st, body, err := w.Proc.Get(ctx, w.API, Scores, k)
		if err != nil || st != 200 || body != data[k] {
			t.Fatalf("wasm node: %s = %d %q, %v; want 200 %q", k, st, body, err, data[k])
		}
	}
	for _, n := range natives {
		for _, k := range keys {
			if v, err := n.Scores.Get(ctx, k); err != nil || v.String() != data[k] {
				t.Fatalf("native %s: %s = %q, %v; want %q", n.URL, k, v.String(), err, data[k])
			}
		}
	}
	ws, err := w.Proc.Stats(ctx, w.API)
	if err != nil {
		t.Fatal(err)
	}
	s := ws.Stats
	t.Logf("wasm node owns %d of %d keys; its stats: %+v", owned, len(keys), s)
	if s.FallbackLoads != 0 || s.PeerErrors != 0 {
		t.Errorf("wasm node: %d fallback loads, %d peer errors; want 0 and 0", s.FallbackLoads, s.PeerErrors)
	}
	if want := int64(len(keys) - owned); s.PeerLoads != want {
		t.Errorf("wasm node: %d peer loads; want %d (the keys it does not own)", s.PeerLoads, want)
	}
	if want := int64(len(natives) * owned); s.PeerRequests != want {
		t.Errorf("wasm node served %d peer requests; want %d (each of its keys, to each native)", s.PeerRequests, want)
	}
	for _, k := range keys {
		owner := natives[0].Pool.Owner(k)
		got := map[string]int{w.Addr: ws.Lookups[k]}
		for _, n := range natives {
			got[n.URL] = n.DB.Lookups(k)
		}
		for u, c := range got {
			if want := map[bool]int{true: 1}[u == owner]; u != "" && c != want {
				t.Errorf("%s loaded by %s %d times; want %d (owner %s)", k, u, c, want, owner)
			}
		}
	}
	if st, body, err := w.Proc.Get(ctx, w.API, Scores, "kkk"); err != nil || st != 404 || body != "kkk not exist" {
		t.Errorf("wasm node: kkk = %d %q, %v; want 404 %q", st, body, err, "kkk not exist")
	}
}

// Keys sends every key of the key-escaping property test (keytest.Keys,
// "." and ".." first) both ways through the host, in the group "echo":
// the wasm node asks the natives for each key (its fetch(): the wasm
// node's group echo asks the other nodes for every key; every key a
// JavaScript string can hold, that is valid UTF-8), and, when
// client is not nil (a nethttp.Client to the wasm node, with the
// cluster's secret), client asks the wasm node for every key (the host's
// HTTP server and URL parsing, then the node's serve function). Each comes
// back as itself; the missing key comes back missing, both ways.
func Keys(t *testing.T, ctx context.Context, w Node, natives []*Native, client *nethttp.Client) {
	t.Helper()
	keys := keytest.Keys(rand.New(rand.NewPCG(20, 1)), 100)
	served := func() (n int64) {
		for _, nt := range natives {
			n += nt.Echo.Stats().PeerRequests
		}
		return n
	}
	before, sent := served(), map[string]bool{}
	for i, k := range keys {
		if !utf8.ValidString(k) {
			continue
		}
		sent[k] = true // once each: a repeated key is a hit in the node's hot cache
		st, body, err := w.Proc.Get(ctx, w.API, Echo, k)
		if err != nil || st != 200 || body != "v="+k {
			t.Fatalf("fetch: key #%d %q from the wasm node = %d %q, %v; want 200 %q", i, k, st, body, err, "v="+k)
		}
	}
	if got := served() - before; got != int64(len(sent)) || len(sent) < 10 {
		t.Errorf("the natives served %d echo requests for %d keys; want as many (and at least 10)", got, len(sent))
	}
	if st, body, err := w.Proc.Get(ctx, w.API, Echo, EchoMissing); err != nil || st != 404 {
		t.Errorf("fetch: the missing key = %d %q, %v; want 404", st, body, err)
	}
	if client == nil {
		return
	}
	for i, k := range keys {
		v, _, err := peertest.Get(ctx, client, Echo, k)
		if err != nil || string(v) != "v="+k {
			t.Fatalf("serve: key #%d %q from the wasm node = %q, %v; want %q", i, k, v, err, "v="+k)
		}
	}
	if _, _, err := peertest.Get(ctx, client, Echo, EchoMissing); !errors.Is(err, getter.ErrNotFound) {
		t.Errorf("serve: the missing key: %v; want getter.ErrNotFound", err)
	}
}

// Concurrent asks w for key of group n times at once and checks that each
// answer is want; it returns w's counters after. Against a slow owner the
// requests overlap, and all but one wait for the one fetch (DedupWaits):
// a host must let a request wait for an answer another request's fetch
// brings.
func Concurrent(t *testing.T, ctx context.Context, w Node, group, key, want string, n int) Report {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			st, body, err := w.Proc.Get(ctx, w.API, group, key)
			if err != nil || st != 200 || body != want {
				t.Errorf("%d requests at once: %s = %d %q, %v; want 200 %q", n, key, st, body, err, want)
			}
		})
	}
	wg.Wait()
	r, err := w.Proc.Stats(ctx, w.API)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// KeyOwnedBy returns the first generated key (Key) that owner
// owns on the ring of addrs, or fails the test.
func KeyOwnedBy(t testing.TB, owner string, addrs ...string) string {
	t.Helper()
	ring, err := nethttp.NewPool("", cache.NewRegistry(), &nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	if err := ring.Set(addrs...); err != nil {
		t.Fatal(err)
	}
	for i := range NumKeys {
		if k := Key(i); ring.Owner(k) == owner {
			return k
		}
	}
	t.Fatalf("%s owns none of the %d generated keys on the ring %v", owner, NumKeys, addrs)
	return ""
}

// Put checks that the wasm node w takes a peer's PUT: natives[0] sets a
// key w owns (its Group.Set, sent to the owner), and w then answers the
// value set, without a lookup in its database.
func Put(t *testing.T, ctx context.Context, w Node, natives []*Native) {
	t.Helper()
	key := ""
	for i := len(ClusterKeys()); key == "" && i < NumKeys; i++ {
		if k := Key(i); natives[0].Pool.Owner(k) == w.Addr {
			key = k
		}
	}
	if key == "" {
		t.Fatalf("%s owns none of the keys Cluster leaves alone", w.Addr)
	}
	if err := natives[0].Scores.Set(ctx, key, []byte("set by a peer"), 0); err != nil {
		t.Fatalf("Set(%s) through the wasm node: %v", key, err)
	}
	if st, body, err := w.Proc.Get(ctx, w.API, Scores, key); err != nil || st != 200 || body != "set by a peer" {
		t.Fatalf("wasm node: %s = %d %q, %v; want 200 %q", key, st, body, err, "set by a peer")
	}
	r, err := w.Proc.Stats(ctx, w.API)
	if err != nil {
		t.Fatal(err)
	}
	if r.Lookups[key] != 0 {
		t.Errorf("wasm node looked %s up %d times; want 0 (it was set)", key, r.Lookups[key])
	}
}
