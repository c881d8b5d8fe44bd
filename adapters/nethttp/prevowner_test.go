//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// headerTransport records the X-Geecache-Peer of every request it sends.
type headerTransport struct {
	http.RoundTripper
	mu   sync.Mutex
	peer []string
}

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.peer = append(h.peer, r.Header.Get(protocol.HeaderPeer))
	h.mu.Unlock()
	return h.RoundTripper.RoundTrip(r)
}

// A memory-only request (a Client's cache.OpPeek) travels signed as
// X-Geecache-Peer: memory and is answered from the node's memory: a held
// value, a cached "not found", and for a key it does not hold 404 not_held
// (cache.ErrNotHeld), without a load.
func TestMemoryOnlyRequestOverHTTP(t *testing.T) {
	var src loads
	secret := []byte("k")
	nodes := nethttptest.Start(t, 1, &nethttptest.Options{Getter: src.getter,
		PoolOptions:  nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: secret}},
		GroupOptions: cache.GroupOptions{NotFoundTTL: time.Minute}})
	n := nodes[0]
	ctx := context.Background()
	for _, k := range []string{"held", "missing-x"} {
		_, _ = n.Group.Get(ctx, k)
	}
	rt := &headerTransport{RoundTripper: nethttp.NewTransport()}
	c, err := nethttp.NewClient(n.Addr, &nethttp.ClientOptions{Secret: secret, Transport: rt})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, err := nethttp.PeerPeek(ctx, c, "scores", "held"); err != nil || string(v) != "v:held" {
		t.Errorf("memory-only held = %q, %v", v, err)
	}
	if _, _, err := nethttp.PeerPeek(ctx, c, "scores", "missing-x"); !errors.Is(err, getter.ErrNotFound) {
		t.Errorf("memory-only missing-x (cached not found) = %v; want not found", err)
	}
	_, _, err = nethttp.PeerPeek(ctx, c, "scores", "cold")
	var pe *cache.PeerError
	if !errors.Is(err, cache.ErrNotHeld) || !errors.As(err, &pe) || pe.Status != 404 || pe.Code != string(protocol.CodeNotHeld) {
		t.Errorf("memory-only cold = %v; want 404 not_held (cache.ErrNotHeld)", err)
	}
	if got := src.count(0, "cold"); got != 0 {
		t.Errorf("a memory-only request loaded the key %d times", got)
	}
	if _, _, err := nethttp.PeerGet(ctx, c, "scores", "cold2"); err != nil {
		t.Errorf("an ordinary peer Get: %v", err)
	}
	rt.mu.Lock()
	want := []string{"memory", "memory", "memory", "1"}
	if fmt.Sprint(rt.peer) != fmt.Sprint(want) {
		t.Errorf("X-Geecache-Peer sent: %q; want %q", rt.peer, want)
	}
	rt.mu.Unlock()
	if s := n.Group.Stats(); s.HandoffServed != 3 || s.PeerRequests != 1 {
		t.Errorf("HandoffServed %d, PeerRequests %d; want 3 and 1", s.HandoffServed, s.PeerRequests)
	}
}

// A node that Drain drains, once the others have dropped it from their
// lists, hands the keys it holds to their new owners over HTTP (each key
// still loads once in the cluster), fetches the keys it owned from their
// next owner for its own Gets, and returns when its context ends; with a
// short DrainFor, Drain returns by itself.
func TestDrainServesAndHandsKeysOver(t *testing.T) {
	var src loads
	nodes := nethttptest.Start(t, 4, &nethttptest.Options{Getter: src.getter,
		PoolOptions: nethttp.PoolOptions{DrainFor: time.Hour},
		// A handoff that waits past its deadline loads the key: on a busy
		// machine (-race, the leaving node offering its keys at the
		// same time) 100 ms is not always enough.
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true, HandoffTimeout: time.Minute}}})
	ctx := context.Background()
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprint("key-", i)
		if _, err := nodes[0].Group.Get(ctx, keys[i]); err != nil {
			t.Fatal(err)
		}
	}
	leaving := nodes[3]
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- leaving.Pool.Drain(sctx) }()
	var rest []string
	for _, n := range nodes[:3] {
		rest = append(rest, n.Addr)
	}
	for _, n := range nodes[:3] {
		if err := n.Pool.Set(rest...); err != nil {
			t.Fatal(err)
		}
	}
	total := func(k string) (n int) {
		for i := range nodes {
			n += src.count(i, k)
		}
		return n
	}
	owned := 0
	for _, k := range keys {
		if leaving.Pool.Owner(k) == leaving.Addr {
			owned++
		}
		for _, n := range nodes[:3] {
			if v, err := n.Group.Get(ctx, k); err != nil || v.String() != "v:"+k {
				t.Fatalf("%s Get(%s) = %q, %v", n.Addr, k, v, err)
			}
		}
		if got := total(k); got != 1 {
			t.Errorf("%s: %d loads after the leaving node's keys moved; want 1", k, got)
		}
	}
	if owned == 0 {
		t.Fatal("the leaving node owned none of the keys")
	}
	// Each key it owned reached its new owner from memory: offered
	// (taken from the leaving node, or a copy the new owner held already
	// made its own) or handed off when asked.
	var moved int64
	for _, n := range nodes[:3] {
		st := n.Group.Stats()
		moved += st.TakenOver + st.Handoffs
	}
	if moved < int64(owned) {
		t.Errorf("%d keys reached their new owners from memory; want at least the %d the leaving node owned", moved, owned)
	}
	// A key the leaving node still owns by its own ring: its Get goes to
	// the next node, which loads it; the leaving node loads nothing.
	for i := 0; ; i++ {
		k := fmt.Sprint("late-", i)
		if leaving.Pool.Owner(k) != leaving.Addr {
			continue
		}
		if v, err := leaving.Group.Get(ctx, k); err != nil || v.String() != "v:"+k {
			t.Fatalf("leaving Get(%s) = %q, %v", k, v, err)
		}
		if src.count(3, k) != 0 || total(k) != 1 {
			t.Errorf("%s: loaded %d times by the leaving node, %d in all; want 0 and 1", k, src.count(3, k), total(k))
		}
		break
	}
	select {
	case err := <-done:
		t.Fatalf("Drain returned %v before its drain ended", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Drain after its context ended = %v; want context.Canceled", err)
	}

	p, err := nethttp.NewPool("http://127.0.0.1:1", cache.NewRegistry(), &nethttp.PoolOptions{DrainFor: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Drain(ctx); err != nil {
		t.Errorf("Drain with a short drain = %v", err)
	}
	if _, err := nethttp.NewPool("", cache.NewRegistry(), &nethttp.PoolOptions{DrainFor: -1}); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("a negative DrainFor: %v; want ErrConfig", err)
	}
}
