package picker

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/internal/peertest"
)

// addrGetter is a Peer that only knows its address.
type addrGetter struct {
	addr string
}

func (g *addrGetter) Do(_ context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return peertest.Fetch(req, reply, func(string) ([]byte, time.Duration, error) { return []byte(g.addr), -1, nil })
}

func (g *addrGetter) Addr() string { return g.addr }

// countingFactory returns a getter constructor and a count of calls per address.
func countingFactory() (func(string) cache.Peer, func(string) int) {
	var mu sync.Mutex
	calls := map[string]int{}
	newGetter := func(addr string) cache.Peer {
		mu.Lock()
		defer mu.Unlock()
		calls[addr]++
		return &addrGetter{addr: addr}
	}
	count := func(addr string) int {
		mu.Lock()
		defer mu.Unlock()
		return calls[addr]
	}
	return newGetter, count
}

// checkPick verifies PickPeer against Owner for keys: ok is false exactly
// when self owns the key, and the getter is the owner's.
func checkPick(t *testing.T, p *Peers, keys []string) {
	t.Helper()
	for _, k := range keys {
		owner := p.Owner(k)
		g, ok := p.PickPeer(k)
		if ok != (owner != p.self) {
			t.Fatalf("PickPeer(%q) ok = %v, owner %q, self %q", k, ok, owner, p.self)
		}
		if ok && g.(*addrGetter).addr != owner {
			t.Fatalf("PickPeer(%q) = getter of %q; owner is %q", k, g.(*addrGetter).addr, owner)
		}
	}
}

func TestPeersBeforeSet(t *testing.T) {
	newGetter, count := countingFactory()
	p := mustPeers("a", newGetter, nil)
	for _, k := range testKeys(100) {
		if _, ok := p.PickPeer(k); ok {
			t.Fatalf("PickPeer(%q) ok before Set", k)
		}
		if o := p.Owner(k); o != "a" {
			t.Fatalf("Owner(%q) = %q before Set; want self", k, o)
		}
	}
	if count("a") != 0 {
		t.Error("newGetter called for self")
	}
}

func TestPeersPick(t *testing.T) {
	newGetter, count := countingFactory()
	addrs := []string{"http://a:1", "http://b:1", "http://c:1"}
	p := mustPeers(addrs[0], newGetter, nil)
	p.Set(addrs...)
	if got := p.Addrs(); !slices.Equal(got, addrs) {
		t.Fatalf("Addrs() = %q; want %q", got, addrs)
	}
	keys := testKeys(3000)
	checkPick(t, p, keys)
	// The peer set places keys exactly like a standalone ring of the same list.
	r := mustNew(addrs, nil)
	seen := map[string]bool{}
	for _, k := range keys {
		if a, b := p.Owner(k), r.owner(k); a != b {
			t.Fatalf("Owner(%q) = %q; ring says %q", k, a, b)
		}
		seen[p.Owner(k)] = true
	}
	if len(seen) != 3 {
		t.Errorf("owners seen: %v; want all three", seen)
	}
	if count(addrs[0]) != 0 || count(addrs[1]) != 1 || count(addrs[2]) != 1 {
		t.Errorf("newGetter calls: self %d, b %d, c %d; want 0, 1, 1", count(addrs[0]), count(addrs[1]), count(addrs[2]))
	}
}

func TestPeersSelfAlwaysOnRing(t *testing.T) {
	with := mustPeers("a", nil, nil)
	with.Set("a", "b", "c")
	without := mustPeers("a", nil, nil)
	without.Set("c", "b")
	if !slices.Equal(without.Addrs(), []string{"a", "b", "c"}) {
		t.Fatalf("Addrs() = %q; self missing", without.Addrs())
	}
	for _, k := range testKeys(1000) {
		if x, y := with.Owner(k), without.Owner(k); x != y {
			t.Fatalf("key %q: owner %q with self listed, %q without", k, x, y)
		}
	}
}

// TestPeersClusterAgrees checks that nodes configured with the same list
// in different orders agree: each key has exactly one owner, and every
// other node picks that owner's getter.
func TestPeersClusterAgrees(t *testing.T) {
	lists := [][]string{{"a", "b", "c"}, {"c", "a", "b"}, {"b", "c", "a", "a"}}
	nodes := make([]*Peers, 3)
	for i, self := range []string{"a", "b", "c"} {
		newGetter, _ := countingFactory()
		nodes[i] = mustPeers(self, newGetter, nil)
		nodes[i].Set(lists[i]...)
	}
	for _, k := range testKeys(3000) {
		owners := 0
		for _, n := range nodes {
			g, ok := n.PickPeer(k)
			if !ok {
				owners++
				continue
			}
			if g.(*addrGetter).addr != nodes[0].Owner(k) {
				t.Fatalf("node %q sends %q to %q; node a says owner is %q", n.self, k, g.(*addrGetter).addr, nodes[0].Owner(k))
			}
		}
		if owners != 1 {
			t.Fatalf("key %q: %d nodes think they own it; want 1", k, owners)
		}
	}
}

func TestPeersSetReusesGetters(t *testing.T) {
	newGetter, count := countingFactory()
	p := mustPeers("a", newGetter, nil)
	p.Set("a", "b", "c")
	getterOf := func(addr string) cache.Peer {
		for _, k := range testKeys(10000) {
			if p.Owner(k) == addr {
				g, _ := p.PickPeer(k)
				return g
			}
		}
		t.Fatalf("no key owned by %q", addr)
		return nil
	}
	gb := getterOf("b")
	p.Set("d", "b", "a")
	if getterOf("b") != gb {
		t.Error("Set replaced the getter of an address that stayed")
	}
	if count("b") != 1 || count("c") != 1 || count("d") != 1 {
		t.Errorf("newGetter calls: b %d, c %d, d %d; want 1 each", count("b"), count("c"), count("d"))
	}
	if got := p.Addrs(); !slices.Equal(got, []string{"a", "b", "d"}) {
		t.Errorf("Addrs() = %q", got)
	}
	p.Set("c")
	if count("c") != 2 {
		t.Errorf("re-added address: newGetter calls for c = %d; want 2", count("c"))
	}
	checkPick(t, p, testKeys(2000))
}

func TestPeersWithoutGetter(t *testing.T) {
	for name, newGetter := range map[string]func(string) cache.Peer{
		"nil constructor": nil,
		"nil getters":     func(string) cache.Peer { return nil },
	} {
		p := mustPeers("a", newGetter, nil)
		p.Set("a", "b", "c")
		others := 0
		for _, k := range testKeys(1000) {
			if p.Owner(k) != "a" {
				others++
			}
			if g, ok := p.PickPeer(k); ok || g != nil {
				t.Fatalf("%s: PickPeer(%q) = %v, %v; want nil, false", name, k, g, ok)
			}
		}
		if others == 0 {
			t.Fatalf("%s: self owns every key", name)
		}
	}
}

func TestPeersEmptySelf(t *testing.T) {
	newGetter, _ := countingFactory()
	p := mustPeers("", newGetter, nil)
	if _, ok := p.PickPeer("k"); ok || p.Owner("k") != "" || len(p.Addrs()) != 0 {
		t.Fatalf("empty set: PickPeer ok = %v, Owner %q, Addrs %q", ok, p.Owner("k"), p.Addrs())
	}
	p.Set("b", "c")
	for _, k := range testKeys(200) {
		if _, ok := p.PickPeer(k); !ok {
			t.Fatalf("client without self: PickPeer(%q) not ok", k)
		}
	}
	checkPick(t, p, testKeys(200))
}

func TestPickPeerZeroAllocs(t *testing.T) {
	newGetter, _ := countingFactory()
	p := mustPeers("n0", newGetter, nil)
	p.Set(nodeNames(10)...)
	keys := testKeys(64)
	i := 0
	if allocs := testing.AllocsPerRun(1000, func() {
		p.PickPeer(keys[i%len(keys)])
		i++
	}); allocs != 0 {
		t.Errorf("PickPeer allocates %.1f times per call", allocs)
	}
}

func TestPeersConcurrentSet(t *testing.T) {
	newGetter, _ := countingFactory()
	all := nodeNames(12)
	p := mustPeers(all[0], newGetter, nil)
	lists := [][]string{all[:3], all[:12], all[2:7], all[5:], nil}
	keys := testKeys(256)

	var wg sync.WaitGroup
	var stop atomic.Bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer stop.Store(true)
		for i := range 200 {
			p.Set(lists[i%len(lists)]...)
		}
	}()
	errs := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200_000 && !stop.Load(); i++ {
				g, ok := p.PickPeer(keys[i%len(keys)])
				if ok && !slices.Contains(all[1:], g.(*addrGetter).addr) {
					errs <- g.(*addrGetter).addr
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for addr := range errs {
		t.Errorf("PickPeer returned a getter for unknown address %q", addr)
	}
	checkPick(t, p, keys)
}

func TestPeersListsEveryPeerButSelf(t *testing.T) {
	p := mustPeers("b", func(addr string) cache.Peer { return &addrGetter{addr: addr} }, nil)
	p.Set("a", "b", "c")
	var got []string
	for _, g := range p.ListPeers() {
		got = append(got, g.(*addrGetter).addr)
	}
	if !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("Peers = %v; want a and c", got)
	}
}
