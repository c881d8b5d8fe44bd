//go:build !js && !wasip1

package main

import (
	"context"
	"sync"
	"testing"
	"time"
)

// keysRange returns the generated keys from..to-1.
func keysRange(from, to int) []string {
	var ks []string
	for i := from; i < to; i++ {
		ks = append(ks, genKey(i))
	}
	return ks
}

// The mixed cluster: a wasm node in node.js and two net/http nodes, with
// a peer secret. Every node answers every key; each key is loaded by its
// owner only; the wasm node fetches from its peers with no fallback and
// they fetch from it; once it is killed, the others carry on.
func TestMixedCluster(t *testing.T) {
	node := nodeJS(t)
	wasm, wasmExec := buildWasm(t)
	const secret = "mixed cluster secret"
	const delay = 2 * time.Millisecond
	a, b := startNative(t, secret, delay), startNative(t, secret, delay)
	w := startWasmNode(t, node, wasm, wasmExec, secret, "-peers="+a.url+","+b.url, "-delay="+delay.String())
	natives := []*nativeNode{a, b}
	for _, n := range natives {
		n.pool.Set(a.url, b.url, w.url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data := dataset()

	// Phase 1: every node gets the tutorial's scores and key-000..key-149, the
	// three nodes at once.
	phase1 := append([]string{"Tom", "Jack", "Sam"}, keysRange(0, 150)...)
	owned := map[string]int{}
	for _, k := range phase1 {
		if o := a.pool.Owner(k); o != b.pool.Owner(k) {
			t.Fatalf("the native nodes disagree on %s's owner: %s, %s", k, o, b.pool.Owner(k))
		}
		owned[a.pool.Owner(k)]++
	}
	for _, u := range []string{a.url, b.url, w.url} {
		if owned[u] == 0 {
			t.Fatalf("%s owns none of the %d keys; the test needs every node to own some (owners: %v)", u, len(phase1), owned)
		}
	}
	var wg sync.WaitGroup
	for _, n := range natives {
		wg.Go(func() {
			for _, k := range phase1 {
				v, err := n.group.Get(ctx, k)
				if err != nil || v.String() != data[k] {
					t.Errorf("native %s: Get(%s) = %q, %v; want %q", n.url, k, v.String(), err, data[k])
				}
			}
		})
	}
	wg.Go(func() {
		for _, k := range phase1 {
			st, body, err := w.get(ctx, k)
			if err != nil || st != 200 || body != data[k] {
				t.Errorf("wasm node: /api?key=%s = %d %q, %v; want 200 %q", k, st, body, err, data[k])
			}
		}
	})
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// Tom, explicitly, from every node (answered from memory now).
	for _, n := range natives {
		if v, err := n.group.Get(ctx, "Tom"); err != nil || v.String() != "630" {
			t.Errorf("native %s: Tom = %q, %v; want 630", n.url, v.String(), err)
		}
	}
	if st, body, err := w.get(ctx, "Tom"); err != nil || st != 200 || body != "630" {
		t.Errorf("wasm node: Tom = %d %q, %v; want 200 630", st, body, err)
	}

	ws, err := w.stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Each key was loaded once in the whole cluster, by its owner.
	for _, k := range phase1 {
		got := map[string]int{a.url: a.db.Lookups(k), b.url: b.db.Lookups(k), w.url: ws.Lookups[k]}
		for u, n := range got {
			want := 0
			if u == a.pool.Owner(k) {
				want = 1
			}
			if n != want {
				t.Errorf("%s loaded by %s %d times; want %d (owner %s)", k, u, n, want, a.pool.Owner(k))
			}
		}
	}
	// The wasm node fetched every key it does not own from its peers, with
	// no error and no fallback; each peer fetched each of its keys from it.
	st := ws.Stats
	t.Logf("wasm node owns %d keys, stats %+v", owned[w.url], st)
	if st.FallbackLoads != 0 || st.PeerErrors != 0 {
		t.Errorf("wasm node: %d fallback loads, %d peer errors; want 0 and 0", st.FallbackLoads, st.PeerErrors)
	}
	if want := int64(len(phase1) - owned[w.url]); st.PeerLoads != want {
		t.Errorf("wasm node: %d peer loads; want %d (the keys it does not own)", st.PeerLoads, want)
	}
	if want := int64(2 * owned[w.url]); st.PeerRequests != want {
		t.Errorf("wasm node served %d peer requests; want %d (each of its keys, from both peers)", st.PeerRequests, want)
	}
	for _, n := range natives {
		s := n.group.Stats()
		if s.FallbackLoads != 0 || s.PeerErrors != 0 || s.PeerLoads != int64(len(phase1)-owned[n.url]) {
			t.Errorf("native %s: %d fallbacks, %d peer errors, %d peer loads; want 0, 0, %d",
				n.url, s.FallbackLoads, s.PeerErrors, s.PeerLoads, len(phase1)-owned[n.url])
		}
	}

	// Phase 2: the wasm node dies. Each of its keys is loaded once, by
	// the next node on the ring, for both native nodes; the others are
	// loaded by their owners as before.
	w.kill()
	phase2 := keysRange(150, 225)
	ofDead := 0
	for _, k := range phase2 {
		if a.pool.Owner(k) == w.url {
			ofDead++
		}
		for _, n := range natives {
			if v, err := n.group.Get(ctx, k); err != nil || v.String() != data[k] {
				t.Errorf("after the kill, native %s: Get(%s) = %q, %v; want %q", n.url, k, v.String(), err, data[k])
			}
		}
	}
	for _, k := range phase2 {
		if n := a.db.Lookups(k) + b.db.Lookups(k); n != 1 {
			t.Errorf("after the kill: %s loaded %d times by the native nodes; want 1 (owner %s)", k, n, a.pool.Owner(k))
		}
	}
	if ofDead == 0 {
		t.Error("the dead node owns none of the phase 2 keys")
	}

	// Phase 3: the dead node is taken out of the peer lists; every key
	// again loads once, on its owner, with no fallback.
	for _, n := range natives {
		n.pool.Set(a.url, b.url)
	}
	phase3 := keysRange(225, numKeys)
	before := [2]int64{a.group.Stats().FallbackLoads, b.group.Stats().FallbackLoads}
	for _, k := range phase3 {
		for _, n := range natives {
			if v, err := n.group.Get(ctx, k); err != nil || v.String() != data[k] {
				t.Errorf("two nodes left, native %s: Get(%s) = %q, %v; want %q", n.url, k, v.String(), err, data[k])
			}
		}
		owner := a.pool.Owner(k)
		for _, n := range natives {
			want := 0
			if n.url == owner {
				want = 1
			}
			if got := n.db.Lookups(k); got != want {
				t.Errorf("two nodes left: %s loaded by %s %d times; want %d", k, n.url, got, want)
			}
		}
	}
	for i, n := range natives {
		if got := n.group.Stats().FallbackLoads - before[i]; got != 0 {
			t.Errorf("two nodes left: native %s fell back %d times; want 0", n.url, got)
		}
	}
}
