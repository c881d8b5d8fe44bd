package cache_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/groupbridge"
	"github.com/geecache/geecache/internal/handoff"
)

// A node that fills up from a handover holds the keys it took in the order
// they came, the most used first, and its policy's hand starts there. When
// it then makes room without a duel (here, as its hot cache grows to its
// share with copies of another node's keys), the keys it loaded itself and
// used once go before the keys it took, which their previous owner used:
// each key taken enters with one use, so the hand passes it once. Before,
// the hand took the keys taken over first, the most used of them first
// (BenchmarkRollSim's surge: the joining node reloaded popular keys it had
// taken). A "not found" handed over stays too, and answers without a load.
func TestTakenKeysOutlastTheHandsFirstPass(t *testing.T) {
	c := &hoCluster{nodes: map[string]*hoNode{}, loads: map[string]int{}, budget: 200 * 16, batch: true}
	all := []string{"a", "s", "x"}
	for _, a := range all {
		c.add(t, a)
	}
	for _, a := range all {
		c.set(t, a, all...)
	}
	s := c.node("s")
	var moved, own, remote []string // x's keys that s owns once x leaves; s's own; a's
	for i := 0; len(moved) < 100 || len(own) < 95 || len(remote) < 60; i++ {
		k := fmt.Sprintf("k%06d", i) // 16 bytes with its value
		switch s.peers.Owner(k) {
		case "x":
			if next, _, _ := c.node("a").peers.PickFallback(k, nil); next != nil && next.Addr() == "s" && len(moved) < 100 {
				moved = append(moved, k)
			}
		case "s":
			if len(own) < 95 {
				own = append(own, k)
			}
		case "a":
			if len(remote) < 60 {
				remote = append(remote, k)
			}
		}
	}
	moved = append(moved, "missing")
	for _, k := range moved {
		c.get(t, "x", k)
	}
	c.set(t, "s", "a", "s") // x leaves s's ring; x, its previous owner, still serves
	groupbridge.TakeOffer(t.Context(), s.g, moved)
	if got := s.g.Stats().TakenOver; got != int64(len(moved)) {
		t.Fatalf("s took %d of the %d keys offered", got, len(moved))
	}
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
		if _, _, err := s.g.GetLocal(handoff.MemoryOnly(t.Context()), k); err != nil && !errors.Is(err, getter.ErrNotFound) {
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
