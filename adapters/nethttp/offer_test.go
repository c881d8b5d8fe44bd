//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The offer (PROTOCOL.md, "Offer"): a node that leaves offers its
// keys to their owners without it, which take them from its memory; a node
// whose ring gains a node offers it the keys it holds that the new node
// owns, which takes them the same way.

// waitFor polls cond every 10 ms, at most 10 s (a bound for a slow
// machine, not a measured time), and reports whether it came true.
func waitFor(cond func() bool) bool {
	for range 1000 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

// restartAt starts a fresh node (empty memory, a new Pool and group) at
// addr, which must be free, with src's getter of index i, and sets its
// ring to addrs. Cleanup stops it.
func restartAt(t *testing.T, addr string, src *loads, i int, addrs []string, notFoundTTL time.Duration) (*nethttp.Pool, *cache.Group) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 100 { // the port was just closed
		if ln, err = net.Listen("tcp", strings.TrimPrefix(addr, "http://")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	reg := cache.NewRegistry()
	rt := nethttp.NewTransport()
	quiet := slog.New(slog.DiscardHandler)
	p, err := nethttp.NewPool(addr, reg, &nethttp.PoolOptions{Transport: rt, DrainFor: 200 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	g, err := reg.NewGroup("scores", 1<<20, src.getter(i), &cache.GroupOptions{Peers: p, NotFoundTTL: notFoundTTL, Logger: quiet,
		PeerPolicy: cache.PeerPolicy{NoHedge: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv := nethttp.NewServer("", p, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
		_ = p.Set()
		_ = p.Close()
		rt.CloseIdleConnections()
	})
	if err := p.Set(addrs...); err != nil {
		t.Fatal(err)
	}
	return p, g
}

// A node that drains hands every key it held to its owner without it,
// although nobody asks for them during the drain: after it is gone, they
// load no more. When it restarts empty at the same address, the nodes that
// took its keys over offer them back as soon as their rings hold it again:
// it serves them from memory even once every other node is down (without
// the offer, each of these Gets loaded from the source).
func TestDrainedKeysStayWarmAndComeBack(t *testing.T) {
	var src loads
	nodes := nethttptest.Start(t, 3, &nethttptest.Options{Getter: src.getter,
		PoolOptions:  nethttp.PoolOptions{DrainFor: 300 * time.Millisecond},
		GroupOptions: cache.GroupOptions{NotFoundTTL: time.Hour, PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	ctx := context.Background()
	leaving := nodes[2]
	keys := append(ownedBy(leaving, "key-", 50), ownedBy(leaving, "missing-", 2)...)
	get := func(g *cache.Group, k string) {
		t.Helper()
		v, err := g.Get(ctx, k)
		if strings.HasPrefix(k, "missing-") {
			if !errors.Is(err, getter.ErrNotFound) {
				t.Fatalf("Get(%s) = %q, %v; want not found", k, v, err)
			}
		} else if err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%s) = %q, %v", k, v, err)
		}
	}
	for _, k := range keys {
		get(nodes[0].Group, k)
	}
	all := []string{nodes[0].Addr, nodes[1].Addr, leaving.Addr}
	for _, n := range nodes[:2] {
		if err := n.Pool.Set(all[:2]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := leaving.Pool.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	leaving.SetFault(nethttptest.Fault{Down: true})
	if s := leaving.Group.Stats(); s.Offered < int64(len(keys)) {
		t.Errorf("the leaving node offered %d keys; want its %d", s.Offered, len(keys))
	}
	total := func(k string) (n int) {
		for i := range 4 {
			n += src.count(i, k)
		}
		return n
	}
	for _, k := range keys {
		get(nodes[0].Group, k)
		if got := total(k); got != 1 {
			t.Errorf("%s: %d loads after its owner drained and left; want 1 (the first)", k, got)
		}
	}

	p, g := restartAt(t, leaving.Addr, &src, 3, all, time.Hour)
	for _, n := range nodes[:2] {
		if err := n.Pool.Set(all...); err != nil {
			t.Fatal(err)
		}
	}
	if !waitFor(func() bool { return g.Stats().TakenOver >= int64(len(keys)) }) {
		t.Errorf("the restarted node took %d keys over; want %d", g.Stats().TakenOver, len(keys))
	}
	for _, n := range nodes[:2] {
		n.SetFault(nethttptest.Fault{Down: true})
	}
	for _, k := range keys {
		if p.Owner(k) != leaving.Addr {
			t.Fatalf("%s moved", k)
		}
		get(g, k)
		if got := src.count(3, k); got != 0 {
			t.Errorf("%s: the restarted node loaded it %d times; want 0 (handed back)", k, got)
		}
	}
}

// A node that drains before the other nodes' rings have dropped it (in
// Kubernetes the pod is Terminating and told to stop at once; discovery
// takes a moment) still hands its keys over: a node takes an offered key
// it does not own yet if it is the successor of the key's owner, from that
// owner. A key whose owner it is not the successor of is not taken.
func TestDrainBeforeTheRingsChange(t *testing.T) {
	var src loads
	nodes := nethttptest.Start(t, 3, &nethttptest.Options{Getter: src.getter,
		PoolOptions:  nethttp.PoolOptions{DrainFor: 300 * time.Millisecond},
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	ctx := context.Background()
	a, b, leaving := nodes[0], nodes[1], nodes[2]
	keys := ownedBy(leaving, "key-", 50)
	for _, k := range keys {
		if _, err := leaving.Group.Get(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	// A key of a's whose successor is not b, held by a: offered to b, it
	// is not taken.
	var other string
	for _, k := range ownedBy(a, "other-", 100) {
		if next, _, _ := a.Pool.PickFallback(k, nil); next != nil && next.Addr() == leaving.Addr {
			other = k
			break
		}
	}
	if other == "" {
		t.Fatal("no key of a's has the leaving node as its successor")
	}
	if _, err := a.Group.Get(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := offer(t, b.Addr, nil, other); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := peek(b.Registry, other); ok || b.Group.Stats().TakenOver != 0 {
		t.Errorf("b took %s, whose owner it does not follow", other)
	}

	if err := leaving.Pool.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	leaving.SetFault(nethttptest.Fault{Down: true})
	for _, n := range nodes[:2] {
		if err := n.Pool.Set(a.Addr, b.Addr); err != nil {
			t.Fatal(err)
		}
	}
	if taken := a.Group.Stats().TakenOver + b.Group.Stats().TakenOver; taken != int64(len(keys)) {
		t.Errorf("%d keys taken over; want the %d the leaving node held", taken, len(keys))
	}
	for _, k := range keys {
		if v, err := a.Group.Get(ctx, k); err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%s) = %q, %v", k, v, err)
		}
		if n := src.count(0, k) + src.count(1, k); n != 0 {
			t.Errorf("%s: loaded %d times after its owner left; want 0", k, n)
		}
	}
}

// offer sends keys of group "scores" to addr as an offer, as a node that
// offers keys does.
func offer(t *testing.T, addr string, o *nethttp.ClientOptions, keys ...string) error {
	t.Helper()
	c, err := nethttp.NewClient(addr, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return nethttp.PeerOffer(ctx, c, "scores", keys)
}

// An offer names keys; it never makes a node store a value of the
// caller's choosing: a node takes an offered key only from the key's
// previous owner under its own ring, from that node's memory. So a key the
// previous owner does not hold, or that the receiver does not own, is not
// taken (it loads when asked), a cached "not found" is taken as one, and
// with a secret an unsigned offer is refused (401).
func TestOfferIsOnlyAHint(t *testing.T) {
	var src loads
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{Getter: src.getter,
		GroupOptions: cache.GroupOptions{NotFoundTTL: time.Hour}})
	a, b := nodes[0], nodes[1]
	ctx := context.Background()
	keys := ownedBy(b, "key-", 10)
	missing := ownedBy(b, "missing-", 1)[0]
	if err := offer(t, b.Addr, nil, keys...); err != nil {
		t.Fatal(err)
	}
	if s := b.Group.Stats(); s.TakenOver != 0 || s.Main.Items != 0 {
		t.Errorf("an offer of keys nobody holds: %d taken, %d held; want none", s.TakenOver, s.Main.Items)
	}

	// b joins a's ring afresh: its previous owner of every key is a,
	// which holds half of the keys b owns and a cached "not found".
	if err := b.Pool.Set(b.Addr); err != nil {
		t.Fatal(err)
	}
	if err := a.Pool.Set(a.Addr); err != nil {
		t.Fatal(err)
	}
	for _, k := range append(keys[:5:5], missing) {
		_, _ = a.Group.Get(ctx, k)
	}
	if err := b.Pool.Set(a.Addr, b.Addr); err != nil {
		t.Fatal(err)
	}
	if err := offer(t, b.Addr, nil, append(keys, missing)...); err != nil {
		t.Fatal(err)
	}
	if s := b.Group.Stats(); s.TakenOver != 6 {
		t.Errorf("%d keys taken; want the 5 values and the not-found the previous owner held", s.TakenOver)
	}
	for i, k := range keys {
		v, err := b.Group.Get(ctx, k)
		if err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%s) = %q, %v", k, v, err)
		}
		want := 0
		if i >= 5 {
			want = 1 // not held by the previous owner: loaded when asked
		}
		if got := src.count(1, k); got != want {
			t.Errorf("%s: %d loads at b; want %d", k, got, want)
		}
	}
	if _, err := b.Group.Get(ctx, missing); !errors.Is(err, getter.ErrNotFound) || src.count(1, missing) != 0 {
		t.Errorf("Get(%s) = %v after %d loads; want not found, offered", missing, err, src.count(1, missing))
	}

	secret := []byte("s")
	sn := nethttptest.Start(t, 1, &nethttptest.Options{PoolOptions: nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: secret}}})
	if err := offer(t, sn[0].Addr, nil, "k"); !errors.Is(err, protocol.ErrUnauthorized) {
		t.Errorf("an unsigned offer to a node with a secret = %v; want ErrUnauthorized", err)
	}
	if err := offer(t, sn[0].Addr, &nethttp.ClientOptions{Secret: secret}, "k"); err != nil {
		t.Errorf("a signed offer = %v", err)
	}
}

// peek reports whether the node of reg holds key of group "scores", by a
// memory-only read (cache.OpPeek).
func peek(reg *cache.Registry, key string) ([]byte, time.Duration, bool) {
	v, ttl, err := nethttp.PeerPeek(context.Background(), nethttp.LocalPeer(reg), "scores", key)
	return v, ttl, err == nil
}

// A node that joins is offered its keys by every node at once: with five
// nodes offering and pulls that take a while (the offerers answer slowly),
// more offers arrive together than a group takes at once, and the ones
// past its slots wait for one instead of being answered without taking
// anything (before, a fifth offer was dropped, and its sender still
// counted the keys as offered: a surge roll left ~17% of the moved
// keys to load again).
func TestJoinTakesEveryOffer(t *testing.T) {
	var src loads
	nodes := nethttptest.Start(t, 6, &nethttptest.Options{Getter: src.getter,
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	ctx := context.Background()
	joining, old := nodes[5], nodes[:5]
	var oldAddrs, all []string
	for _, n := range nodes {
		all = append(all, n.Addr)
	}
	oldAddrs = all[:5]
	for _, n := range old {
		if err := n.Pool.Set(oldAddrs...); err != nil {
			t.Fatal(err)
		}
	}
	keys := ownedBy(joining, "key-", 200)
	holders := map[string]bool{}
	for _, k := range keys {
		if v, err := old[0].Group.Get(ctx, k); err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%s) = %q, %v", k, v, err)
		}
		holders[old[0].Pool.Owner(k)] = true
	}
	if len(holders) < 5 {
		t.Fatalf("the keys are held by %d of the 5 old nodes; the test needs all 5 to offer", len(holders))
	}
	for _, n := range old {
		n.SetFault(nethttptest.Fault{Delay: 300 * time.Millisecond}) // each pull from it takes 300 ms
	}
	for _, n := range old {
		if err := n.Pool.Set(all...); err != nil {
			t.Fatal(err)
		}
	}
	if !waitFor(func() bool { return joining.Group.Stats().TakenOver >= int64(len(keys)) }) {
		t.Errorf("the joining node took %d of the %d keys offered to it", joining.Group.Stats().TakenOver, len(keys))
	}
	for _, n := range old {
		n.SetFault(nethttptest.Fault{Down: true})
	}
	for _, k := range keys {
		if v, err := joining.Group.Get(ctx, k); err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%s) at the joining node = %q, %v", k, v, err)
		}
	}
	if n := src.count(5, keys[0]); n != 0 {
		t.Errorf("the joining node loaded %s %d times; want 0 (taken over)", keys[0], n)
	}
}
