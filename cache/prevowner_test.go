package cache_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/peertest"
	"github.com/geecache/geecache/picker"
)

// An in-process cluster for the handoff tests: each node a Registry with
// group "g", a picker.Peers and peers that hand each request to the other
// node's Registry.ServePeer, as a transport's server does. The source counts its loads per key; "missing" and keys that begin with "absent" are not found.

var errNodeDown = errors.New("node down")

type hoCluster struct {
	budget int64 // per node; 0 means 1 MiB
	nodes  map[string]*hoNode
	mu     sync.Mutex
	loads  map[string]int
	policy cache.PeerPolicy
	batch  bool // peers answer requests of many keys (hoBatchPeer); else the group asks key by key
}

type hoNode struct {
	addr  string
	g     *cache.Group
	reg   *cache.Registry // g's
	peers *picker.Peers
	down  atomic.Bool
	sick  atomic.Bool  // fails every request but memory-only ones
	calls atomic.Int64 // peer requests it served
	tries atomic.Int64 // peer requests sent to it, down or not
	mem   atomic.Int64 // of which memory-only
}

// hoPeer carries reads of one key (OpGet, and OpPeek: memory-only); it
// cannot carry a request of many keys, a write or an offer.
type hoPeer struct{ to *hoNode }

func (p *hoPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if (req.Op != cache.OpGet && req.Op != cache.OpPeek) || len(req.Keys) != 1 {
		return peertest.ErrReadOnly
	}
	memOnly := req.Op == cache.OpPeek
	p.to.tries.Add(1)
	if p.to.down.Load() || (p.to.sick.Load() && !memOnly) {
		return fmt.Errorf("%s: %w", p.to.addr, errNodeDown)
	}
	p.to.calls.Add(1)
	if memOnly {
		p.to.mem.Add(1)
	}
	return serve(ctx, p.to.reg, req, reply)
}

func (p *hoPeer) Addr() string { return p.to.addr }

func newHoCluster(t *testing.T, policy cache.PeerPolicy, addrs ...string) *hoCluster {
	t.Helper()
	c := &hoCluster{nodes: map[string]*hoNode{}, loads: map[string]int{}, policy: policy}
	for _, a := range addrs {
		c.add(t, a)
	}
	for _, a := range addrs {
		c.set(t, a, addrs...)
	}
	return c
}

// add starts a node at addr (fresh memory), owning every key until set.
func (c *hoCluster) add(t *testing.T, addr string) *hoNode {
	t.Helper()
	n := &hoNode{addr: addr}
	var err error
	n.peers, err = picker.NewPeers(addr, func(a string) cache.Peer {
		if c.batch {
			return hoBatchPeer{&hoPeer{to: c.node(a)}}
		}
		return &hoPeer{to: c.node(a)}
	}, &picker.Options{Replicas: 64, Handoff: true})
	if err != nil {
		t.Fatal(err)
	}
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		c.mu.Lock()
		c.loads[key]++
		c.mu.Unlock()
		if key == "missing" || strings.HasPrefix(key, "absent") {
			return nil, getter.ErrNotFound
		}
		return []byte("v:" + key), nil
	})
	pol := c.policy
	pol.NoHedge = true // a busy machine must not start loads the counts do not expect
	budget := c.budget
	if budget == 0 {
		budget = 1 << 20
	}
	n.reg = cache.NewRegistry()
	n.g, err = n.reg.NewGroup("g", budget, src, &cache.GroupOptions{Peers: n.peers, PeerPolicy: pol,
		NotFoundTTL: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.nodes[addr] = n
	c.mu.Unlock()
	return n
}

func (c *hoCluster) node(a string) *hoNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[a]
}

func (c *hoCluster) set(t *testing.T, addr string, list ...string) {
	t.Helper()
	if err := c.node(addr).peers.Set(list...); err != nil {
		t.Fatal(err)
	}
}

func (c *hoCluster) loadsOf(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loads[key]
}

func (c *hoCluster) totalLoads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.loads {
		n += l
	}
	return n
}

// get gets key through node at and checks the value.
func (c *hoCluster) get(t *testing.T, at, key string) {
	t.Helper()
	v, err := c.node(at).g.Get(context.Background(), key)
	if key == "missing" {
		if !errors.Is(err, getter.ErrNotFound) {
			t.Fatalf("Get(missing) at %s = %q, %v; want not found", at, v, err)
		}
		return
	}
	if err != nil || v.String() != "v:"+key {
		t.Fatalf("Get(%s) at %s = %q, %v", key, at, v, err)
	}
}

func hoKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
	}
	return append(keys, "missing")
}

// A node that joins asks the previous owner of each key it now owns for it
// (from memory) before loading it: no key the cluster held is loaded again,
// missing keys included, and the keys nobody held load once.
func TestHandoffToJoiningNode(t *testing.T) {
	c := newHoCluster(t, cache.PeerPolicy{}, "a", "b", "c")
	keys := hoKeys(300)
	for _, k := range keys {
		c.get(t, "a", k)
	}
	if got := c.totalLoads(); got != len(keys) {
		t.Fatalf("warm-up took %d loads for %d keys", got, len(keys))
	}
	mainItems := func() (n int64) {
		for _, a := range []string{"a", "b", "c"} {
			n += c.node(a).g.Stats().Main.Items
		}
		return n
	}
	held := mainItems()
	d := c.add(t, "d")
	for _, a := range []string{"a", "b", "c", "d"} {
		c.set(t, a, "a", "b", "c", "d")
	}
	moved := 0
	for _, k := range keys {
		if d.peers.Owner(k) == "d" {
			moved++
		}
		c.get(t, "d", k)
		c.get(t, "b", k)
	}
	// Each key that moved left its previous owner's main cache (for its
	// hot cache): the room goes to the keys it still owns.
	if got := mainItems(); got != held-int64(moved) {
		t.Errorf("the previous owners' main caches hold %d keys; want %d - %d moved", got, held, moved)
	}
	for _, k := range keys {
		c.get(t, "d", k+"-new") // never held by anyone: one load
	}
	if moved == 0 {
		t.Fatal("no key moved to d")
	}
	for _, k := range keys {
		if n := c.loadsOf(k); n != 1 {
			t.Errorf("%s: %d loads after d joined; want 1 (taken from its previous owner)", k, n)
		}
		if n := c.loadsOf(k + "-new"); n != 1 {
			t.Errorf("%s-new: %d loads; want 1", k, n)
		}
	}
	if s := d.g.Stats(); s.Handoffs != int64(moved) {
		t.Errorf("d's Handoffs = %d; want the %d keys that moved to it", s.Handoffs, moved)
	}
}

// A node that leaves (dropped from every other node's list) but still
// serves hands its keys to their new owners from memory.
func TestHandoffFromLeavingNode(t *testing.T) {
	c := newHoCluster(t, cache.PeerPolicy{}, "a", "b", "c", "d")
	keys := hoKeys(300)
	for _, k := range keys {
		c.get(t, "a", k)
	}
	d := c.node("d")
	d.calls.Store(0)
	d.mem.Store(0)
	for _, a := range []string{"a", "b", "c"} {
		c.set(t, a, "a", "b", "c")
	}
	for _, k := range keys {
		c.get(t, "c", k)
	}
	for _, k := range keys {
		if n := c.loadsOf(k); n != 1 {
			t.Errorf("%s: %d loads after d left; want 1", k, n)
		}
	}
	if d.mem.Load() == 0 {
		t.Error("d served no memory-only request")
	}
	if d.calls.Load() != d.mem.Load() {
		t.Errorf("d, out of every ring, served %d requests of which %d memory-only; want only memory-only ones",
			d.calls.Load(), d.mem.Load())
	}
}

// A memory-only request (OpPeek) is answered from memory: a held value, a
// cached "not found", and for anything else cache.ErrNotHeld without a
// load.
func TestMemoryOnlyNeverLoads(t *testing.T) {
	c := newHoCluster(t, cache.PeerPolicy{}, "a")
	n := c.node("a")
	c.get(t, "a", "held")
	c.get(t, "a", "missing")
	ctx := context.Background()
	if v, _, err := serveKey(ctx, n.reg, n.g, cache.OpPeek, "held"); err != nil || v.String() != "v:held" {
		t.Errorf("memory-only held = %q, %v", v, err)
	}
	if _, _, err := serveKey(ctx, n.reg, n.g, cache.OpPeek, "missing"); !errors.Is(err, getter.ErrNotFound) {
		t.Errorf("memory-only missing (cached not found) = %v; want not found", err)
	}
	if _, _, err := serveKey(ctx, n.reg, n.g, cache.OpPeek, "cold"); !errors.Is(err, cache.ErrNotHeld) {
		t.Errorf("memory-only cold = %v; want ErrNotHeld", err)
	}
	if n := c.loadsOf("cold"); n != 0 {
		t.Errorf("a memory-only request loaded the key %d times", n)
	}
}

// The keys of an owner that is down are fetched from the next live node
// on the ring, which loads each once for the whole cluster; with no live
// node but self, the node loads them itself, as before.
func TestDeadOwnerKeysLoadOnceAtNextNode(t *testing.T) {
	addrs := []string{"a", "b", "c", "d", "e"}
	c := newHoCluster(t, cache.PeerPolicy{}, addrs...)
	var keys []string
	for _, k := range hoKeys(400) {
		if c.node("a").peers.Owner(k) == "e" {
			keys = append(keys, k)
		}
	}
	c.node("e").down.Store(true)
	for _, at := range addrs[:4] {
		for _, k := range keys {
			c.get(t, at, k)
		}
	}
	for _, k := range keys {
		if n := c.loadsOf(k); n != 1 {
			t.Errorf("%s (owner e down): %d loads by 4 nodes; want 1", k, n)
		}
	}
	// Every other node down too: a still answers, loading itself.
	for _, a := range addrs[1:] {
		c.node(a).down.Store(true)
	}
	c.get(t, "a", "alone")
	if n := c.loadsOf("alone"); n != 1 {
		t.Errorf("alone: %d loads; want 1", n)
	}
}

// Nodes whose rings disagree (each thinks another owns the keys, and each
// names another as previous owner) never pass a request on more than one
// step: a user's Get costs at most one forwarded request and one
// memory-only request, and each key loads at most once per node asked.
func TestHandoffRingDisagreementLoopFree(t *testing.T) {
	c := newHoCluster(t, cache.PeerPolicy{}, "a", "b", "c")
	// Three views of the cluster, each with a previous ring of its own.
	c.set(t, "b", "a", "b")
	c.set(t, "c", "a", "c")
	keys := hoKeys(200)
	gets := 0
	for _, at := range []string{"a", "b", "c"} {
		for _, k := range keys {
			c.get(t, at, k)
			gets++
		}
	}
	var calls int64
	for _, a := range []string{"a", "b", "c"} {
		calls += c.node(a).calls.Load()
	}
	if calls > int64(2*gets) {
		t.Errorf("%d peer requests for %d Gets; one hop allows at most 2 each", calls, gets)
	}
	for _, k := range keys {
		if n := c.loadsOf(k); n > 3 {
			t.Errorf("%s: %d loads over 3 nodes", k, n)
		}
	}
}

// A peer that was down long enough for its ejection to double several
// times is readmitted within about EjectFor of answering again (a
// background memory-only probe), not at the end of the doubled ejection.
// In a synctest bubble, whose clock the test moves.
func TestEjectedPeerReadmittedWhenItAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newHoCluster(t, cache.PeerPolicy{EjectAfter: 1, EjectFor: time.Second}, "a", "b")
		n := 0
		key := func() string { // a key of b's that a has not asked for yet
			for {
				n++
				if k := fmt.Sprintf("k%d", n); c.node("a").peers.Owner(k) == "b" {
					return k
				}
			}
		}
		a, b := c.node("a"), c.node("b")
		b.down.Store(true)
		ejected := func() bool {
			for _, p := range a.g.Stats().Peers {
				if p.Addr == "b" {
					return p.Ejected
				}
			}
			return false
		}
		for range 120 { // 12 s down: ejections of 1, 2, 4 and 8 s in a row
			c.get(t, "a", key())
			time.Sleep(100 * time.Millisecond)
		}
		if !ejected() {
			t.Fatal("b is not ejected after 12 s down")
		}
		b.down.Store(false)
		back := time.Now()
		for ejected() && time.Since(back) < 30*time.Second {
			c.get(t, "a", key())
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
		}
		if d := time.Since(back); d > 1500*time.Millisecond {
			t.Errorf("b was readmitted %v after it answered again; want within EjectFor (1 s) and a Get", d)
		}
		time.Sleep(time.Second) // the load workers end when idle
	})
}

// A key that the next node loads for an owner that is down stays in its
// memory against keys it has seen used twice: it is credited with the uses
// the owner saw, not taken for a key used once (which the W-TinyLFU
// admission would evict at once, so that the next request for it would
// load it again).
func TestTakenOverKeyStaysAtNextNode(t *testing.T) {
	c := &hoCluster{nodes: map[string]*hoNode{}, loads: map[string]int{}, budget: 200 * 16}
	for _, a := range []string{"a", "s", "x"} {
		c.add(t, a)
	}
	for _, a := range []string{"a", "s", "x"} {
		c.set(t, a, "a", "s", "x")
	}
	a := c.node("a")
	var own, taken []string // keys of s (7 bytes, and 9 of value), and x's keys whose next node is s
	for i := 0; len(own) < 200 || len(taken) < 20; i++ {
		k := fmt.Sprintf("k%06d", i)
		switch a.peers.Owner(k) {
		case "s":
			own = append(own, k)
		case "x":
			if next, _, _ := a.peers.PickFallback(k, nil); next != nil && next.Addr() == "s" && len(taken) < 20 {
				taken = append(taken, k)
			}
		}
	}
	for range 2 { // s's memory is full of its own keys, each used twice
		for _, k := range own {
			c.get(t, "s", k)
		}
	}
	c.node("x").down.Store(true)
	for _, k := range taken {
		c.get(t, "a", k) // a: x fails, then ejected; s loads the key
	}
	kept := 0
	for _, k := range taken {
		c.get(t, "s", k)
		if c.loadsOf(k) == 1 {
			kept++
		}
	}
	t.Logf("kept %d of %d; s: %+v", kept, len(taken), c.node("s").g.Stats().Main)
	if kept < len(taken)*3/4 {
		t.Errorf("%d of %d keys taken over were still held at the next node; want nearly all", kept, len(taken))
	}
}

// A key moved by a ring change is counted one use (creditMoved),
// not the three of a key loaded for a dead owner: an offer names every key
// the sender held, cold ones too, and at a full receiver a flat three made
// each of them win its admission duel against the receiver's own keys used
// twice, which then loaded again (BenchmarkRollSim). Only a few keys offered
// here may push out one of s's own keys: those whose places the
// window's last newcomers took, or that a collision in the sketch favoured.
func TestOfferedKeysDoNotPushOutKeysUsedTwice(t *testing.T) {
	c := &hoCluster{nodes: map[string]*hoNode{}, loads: map[string]int{}, budget: 200 * 16, batch: true}
	all := []string{"a", "s", "x"}
	for _, a := range all {
		c.add(t, a)
	}
	for _, a := range all {
		c.set(t, a, all...)
	}
	s := c.node("s")
	var own, moved []string // s's keys, and x's keys that s owns once x leaves
	for i := 0; len(own) < 200 || len(moved) < 40; i++ {
		k := fmt.Sprintf("k%06d", i)
		switch s.peers.Owner(k) {
		case "s":
			if len(own) < 200 {
				own = append(own, k)
			}
		case "x":
			if next, _, _ := c.node("a").peers.PickFallback(k, nil); next != nil && next.Addr() == "s" && len(moved) < 40 {
				moved = append(moved, k)
			}
		}
	}
	for range 2 {
		for _, k := range own {
			c.get(t, "s", k)
		}
	}
	for _, k := range moved {
		c.get(t, "x", k)
	}
	c.set(t, "s", "a", "s") // x leaves s's ring; x, its previous owner, still serves
	takeOffer(t, s, moved)
	taken := s.g.Stats().TakenOver
	// Which of s's own keys are still held: asked from memory alone, so
	// that the count is not a cascade of reloads each pushing out the next.
	gone := 0
	for _, k := range own {
		if _, _, err := serveKey(t.Context(), s.reg, s.g, cache.OpPeek, k); err != nil {
			gone++
		}
	}
	t.Logf("taken over %d of %d; own keys pushed out %d of %d; s: %+v", taken, len(moved), gone, len(own), s.g.Stats().Main)
	if taken == 0 {
		t.Fatalf("s took none of the %d keys offered: the test no longer tests an offer", len(moved))
	}
	if gone > len(moved)/5 {
		t.Errorf("%d of s's %d own keys, used twice, were pushed out by the %d keys offered", gone, len(own), len(moved))
	}
	for _, k := range []string{moved[0], "missing"} {
		c.get(t, "s", k) // a key offered, and a missing one, still answer
	}
}

// takeOffer has n take the keys of a peer's offer (OpOffer), as its
// transport's server does.
func takeOffer(t *testing.T, n *hoNode, keys []string) {
	t.Helper()
	if err := n.reg.ServePeer(t.Context(), cache.PeerRequest{Op: cache.OpOffer, Group: n.g.Name(), Keys: keys}, newAnswers(len(keys))); err != nil {
		t.Fatal(err)
	}
}
