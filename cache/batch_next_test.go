package cache_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// hoBatchPeer is an hoPeer that carries reads of many keys too: it hands
// them to the node's Registry.ServePeer, as a transport's server does.
type hoBatchPeer struct{ *hoPeer }

func (p hoBatchPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if len(req.Keys) == 1 {
		return p.hoPeer.Do(ctx, req, reply)
	}
	if p.to.down.Load() {
		return fmt.Errorf("%s: %w", p.to.addr, errNodeDown)
	}
	if req.Op != cache.OpGet && req.Op != cache.OpPeek {
		return errors.ErrUnsupported
	}
	p.to.calls.Add(1)
	return serve(ctx, p.to.reg, req, reply)
}

// getManyHo runs GetMany of keys at node at and checks every result: the
// value, or not found for the keys that begin with "absent".
func (c *hoCluster) getManyHo(t *testing.T, at string, keys []string) {
	t.Helper()
	calls := 0
	c.node(at).g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
		calls++
		k := keys[i]
		if strings.HasPrefix(k, "absent") {
			if !errors.Is(err, getter.ErrNotFound) {
				t.Errorf("GetMany at %s: %s = %q, %v; want not found", at, k, v, err)
			}
			return
		}
		if err != nil || v.String() != "v:"+k {
			t.Errorf("GetMany at %s: %s = %q, %v; want %q", at, k, v, err, "v:"+k)
		}
	})
	if calls != len(keys) {
		t.Fatalf("GetMany at %s: each called %d times for %d keys", at, calls, len(keys))
	}
}

// ownedBy returns up to n keys with prefix that owner owns by at's ring.
func (c *hoCluster) ownedBy(at, owner, prefix string, n int) []string {
	var keys []string
	for i := 0; len(keys) < n && i < 100*n; i++ {
		if k := fmt.Sprintf("%s-%d", prefix, i); c.node(at).peers.Owner(k) == owner {
			keys = append(keys, k)
		}
	}
	return keys
}

// The keys of a GetMany whose owner is down (failed at first, ejected
// after) are fetched from the next live node on the ring, in one batch
// per node, which loads each once for the whole cluster, missing keys
// included: not once per node that asks, as a local fallback would.
func TestGetManyDeadOwnerKeysLoadOnceAtNextNode(t *testing.T) {
	addrs := []string{"a", "b", "c", "d", "e"}
	c := newHoClusterBatch(t, cache.PeerPolicy{EjectAfter: 1}, addrs...)
	c.node("e").down.Store(true)
	// Two rounds of fresh keys: the first finds e failing, the second
	// (after a's, b's... first failure) finds it ejected.
	for round := range 2 {
		present := c.ownedBy("a", "e", fmt.Sprintf("key%d", round), 30)
		missing := c.ownedBy("a", "e", fmt.Sprintf("absent%d", round), 5)
		others := c.ownedBy("a", "b", fmt.Sprintf("other%d", round), 5)
		if len(present) < 30 || len(missing) < 5 || len(others) < 5 {
			t.Fatalf("round %d: too few keys of e (%d, %d) or b (%d)", round, len(present), len(missing), len(others))
		}
		keys := append(append(append([]string{}, present...), missing...), others...)
		for _, at := range addrs[:4] {
			c.getManyHo(t, at, keys)
		}
		for _, k := range append(present, missing...) {
			if n := c.loadsOf(k); n != 1 {
				t.Errorf("round %d: %s (owner e down): %d loads by 4 nodes; want 1", round, k, n)
			}
		}
		for _, k := range others {
			if n := c.loadsOf(k); n != 1 {
				t.Errorf("round %d: %s (owner b up): %d loads; want 1", round, k, n)
			}
		}
	}
	if s := c.node("a").g.Stats(); s.NextPeer == 0 || s.EjectedLoads == 0 {
		t.Errorf("a's stats: NextPeer %d, EjectedLoads %d; want both > 0 (failed, then ejected owner)", s.NextPeer, s.EjectedLoads)
	}
}

// With no live node after the owner but this one, or a next node that
// fails too, a GetMany loads the keys itself: every key still answers.
func TestGetManyNoLiveNextNodeLoadsLocally(t *testing.T) {
	c := newHoClusterBatch(t, cache.PeerPolicy{EjectAfter: 1}, "a", "b", "c")
	c.node("c").down.Store(true)
	c.node("b").down.Store(true) // not ejected yet: a's next-node batch to it fails
	keys := append(c.ownedBy("a", "c", "key", 20), c.ownedBy("a", "c", "absent", 3)...)
	for range 2 { // the second time, b and c are ejected: no live successor
		c.getManyHo(t, "a", keys)
	}
	more := append(c.ownedBy("a", "b", "more", 20), c.ownedBy("a", "c", "absent-more", 3)...)
	c.getManyHo(t, "a", more)
	for _, k := range append(keys, more...) {
		if n := c.loadsOf(k); n != 1 {
			t.Errorf("%s: %d loads at a; want 1", k, n)
		}
	}
}

// newHoClusterBatch is newHoCluster with peers that answer requests of
// many keys (hoBatchPeer).
func newHoClusterBatch(t *testing.T, policy cache.PeerPolicy, addrs ...string) *hoCluster {
	t.Helper()
	c := &hoCluster{nodes: map[string]*hoNode{}, loads: map[string]int{}, policy: policy, batch: true}
	for _, a := range addrs {
		c.add(t, a)
	}
	for _, a := range addrs {
		c.set(t, a, addrs...)
	}
	return c
}
