package cache_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// takeCluster is three nodes a, s and x with room for 200 entries each; s
// has taken over, by an offer, the keys of x that it owns once x leaves its
// ring (moved, the order of the offer, and "missing"), and holds nothing
// else. own are keys s owns, remote keys a owns; neither is held yet.
func takeCluster(t *testing.T, nMoved, nOwn, nRemote int) (c *hoCluster, s *hoNode, moved, own, remote []string) {
	t.Helper()
	c = &hoCluster{nodes: map[string]*hoNode{}, loads: map[string]int{}, budget: 200 * 16, batch: true}
	all := []string{"a", "s", "x"}
	for _, a := range all {
		c.add(t, a)
	}
	for _, a := range all {
		c.set(t, a, all...)
	}
	s = c.node("s")
	for i := 0; len(moved) < nMoved || len(own) < nOwn || len(remote) < nRemote; i++ {
		k := fmt.Sprintf("k%06d", i) // 16 bytes with its value
		switch s.peers.Owner(k) {
		case "x":
			if next, _, _ := c.node("a").peers.PickFallback(k, nil); next != nil && next.Addr() == "s" && len(moved) < nMoved {
				moved = append(moved, k)
			}
		case "s":
			if len(own) < nOwn {
				own = append(own, k)
			}
		case "a":
			if len(remote) < nRemote {
				remote = append(remote, k)
			}
		}
	}
	moved = append(moved, "missing")
	for _, k := range moved {
		c.get(t, "x", k)
	}
	c.set(t, "s", "a", "s") // x leaves s's ring; x, its previous owner, still serves
	takeOffer(t, s, moved)
	if got := s.g.Stats().TakenOver; got != int64(len(moved)) {
		t.Fatalf("s took %d of the %d keys offered", got, len(moved))
	}
	return c, s, moved, own, remote
}

// heldAt reports whether node n holds key in memory (a value or a cached
// "not found"), asked from memory alone.
func heldAt(t *testing.T, n *hoNode, key string) bool {
	_, _, err := serveKey(t.Context(), n.reg, n.g, cache.OpPeek, key)
	return err == nil || errors.Is(err, getter.ErrNotFound)
}

// A node that fills up from an offer holds the keys it took in the order
// they came, the most used first. When it then makes room without a duel
// (here, as its hot cache grows to its share with copies of another node's
// keys), the keys it loaded itself and used once go before the keys it
// took, which their previous owner used: each key taken enters with one
// use, so the hand passes it once. Evicting the keys taken first would make
// a joining node reload popular keys it had taken (BenchmarkRollSim's
// surge). An offered "not found" stays too, and answers without a load.
func TestTakenKeysOutlastTheHandsFirstPass(t *testing.T) {
	c, s, moved, own, remote := takeCluster(t, 100, 95, 60)
	for _, k := range own {
		c.get(t, "s", k) // loaded here, used once: with the keys taken, 196 of the 200 entries s has room for
	}
	for _, k := range remote {
		c.get(t, "s", k) // copies in hot: main gives room until hot has its share
	}
	st := s.g.Stats()
	if st.Main.Evictions == 0 {
		t.Fatalf("s evicted nothing from main (%+v): the test no longer tests the hand", st)
	}
	gone := 0
	for _, k := range moved {
		if !heldAt(t, s, k) {
			gone++
		}
	}
	t.Logf("taken keys gone %d of %d; main evictions %d; s: main %+v hot %+v", gone, len(moved), st.Main.Evictions, st.Main, st.Hot)
	if gone > 0 {
		t.Errorf("%d of the %d keys s took were evicted before the %d keys it loaded and used once", gone, len(moved), len(own))
	}
	before := c.totalLoads()
	for _, k := range []string{moved[0], "missing"} {
		c.get(t, "s", k)
	}
	if got := c.totalLoads(); got != before {
		t.Errorf("a key taken and the \"not found\" taken took %d loads at s; want none", got-before)
	}
}

// Of the keys a node took and holds alone, the last offered, the least used
// by their previous owner, go first when it makes room without a duel.
// Before, the hand met them in the order they came and took the most used
// first.
func TestTheKeysOfferedLastGoFirst(t *testing.T) {
	c, s, moved, _, remote := takeCluster(t, 190, 0, 60)
	for _, k := range remote {
		c.get(t, "s", k) // copies in hot: main gives room until hot has its share
	}
	st := s.g.Stats()
	if st.Main.Evictions == 0 {
		t.Fatalf("s evicted nothing from main (%+v): the test no longer tests the hand", st)
	}
	var gone []int
	for i, k := range moved {
		if !heldAt(t, s, k) {
			gone = append(gone, i)
		}
	}
	t.Logf("gone (places in the offer) %v; s: main %+v hot %+v", gone, st.Main, st.Hot)
	for _, i := range gone {
		if i < len(moved)/2 {
			t.Errorf("%s, offered %d of %d (the most used first), was evicted before keys offered after it", moved[i], i, len(moved))
		}
	}
}

// A surge's step at one node s: a new node y joins and takes s's keys that
// it owns now, which frees room at s; s loads keys of its own in that room,
// each once, without a duel; then x leaves, and s takes over x's keys that
// it owns once x is gone, each with one use. Those keys replace the ones
// loaded in the room, not the keys s used before: the entries that came in
// without a duel are weighed against the hand's victim once s is full
// again, and those used less than it are the first the hand meets. Before,
// the hand met s's older keys first, every key taken lost its duel against
// one of them, and the keys loaded once stayed (BenchmarkRollSim's surge:
// the leaving node's keys loaded again once its drain ended).
func TestTakenKeysReplaceKeysLoadedInFreedRoom(t *testing.T) {
	c := &hoCluster{nodes: map[string]*hoNode{}, loads: map[string]int{}, budget: 200 * 16, batch: true}
	three, four, after := []string{"a", "s", "x"}, []string{"a", "s", "x", "y"}, []string{"a", "s", "y"}
	for _, a := range four {
		c.add(t, a)
	}
	for _, a := range three {
		c.set(t, a, three...)
	}
	c.set(t, "y", four...)
	ring := func(addrs []string) *picker.Peers { // who owns a key, as the nodes' rings say
		p, err := picker.NewPeers("z", func(string) cache.Peer { return nil }, &picker.Options{Replicas: 64})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Set(addrs...); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r3, r4, ra := ring(three).Owner, ring(four).Owner, ring(after).Owner
	var used, gone, room, taken []string
	for i := 0; len(used) < 150 || len(gone) < 60 || len(room) < 40 || len(taken) < 20; i++ {
		k := fmt.Sprintf("k%06d", i) // 16 bytes with its value
		switch {
		case r3(k) == "s" && r4(k) == "s" && ra(k) == "s":
			if len(used) < 150 {
				used = append(used, k)
			} else if len(room) < 40 {
				room = append(room, k)
			}
		case r3(k) == "s" && r4(k) == "y" && len(gone) < 60:
			gone = append(gone, k)
		case r4(k) == "x" && ra(k) == "s" && len(taken) < 20:
			taken = append(taken, k)
		}
	}
	s, y := c.node("s"), c.node("y")
	for range 2 {
		for _, k := range append(slices.Clone(used), gone...) {
			c.get(t, "s", k) // 210 keys in room for 200: s is full, its hand has run
		}
		for _, k := range taken {
			c.get(t, "x", k)
		}
	}
	for _, a := range three {
		c.set(t, a, four...)
	}
	takeOffer(t, y, gone) // y joins: its keys leave s's main
	if got := y.g.Stats().TakenOver; got == 0 {
		t.Fatal("y took none of its keys from s")
	}
	for _, k := range room {
		c.get(t, "s", k) // in the room y's keys left: no duel
	}
	c.set(t, "s", after...) // x leaves s's ring; x, its previous owner, still serves
	ev := s.g.Stats().Main.Evictions
	takeOffer(t, s, taken)
	st := s.g.Stats()
	if st.Main.Evictions == ev {
		t.Fatalf("s evicted nothing from main to take x's keys (%+v): the test no longer tests the duel", st)
	}
	count := func(keys []string) (n int) {
		for _, k := range keys {
			if heldAt(t, s, k) {
				n++
			}
		}
		return n
	}
	t.Logf("s holds %d of %d keys taken, %d of %d loaded in the room, %d of %d used before; main %+v hot %+v",
		count(taken), len(taken), count(room), len(room), count(used), len(used), st.Main, st.Hot)
	if got := count(taken); got < len(taken)*9/10 {
		t.Errorf("s holds %d of the %d keys it took over and %d of the %d keys it loaded once in the room: the keys taken met keys used before in their duels", got, len(taken), count(room), len(room))
	}
}
