package lru

import (
	"cmp"
	"slices"
)

// Keys returns up to max of the keys held that keep returns true for
// (nil: every key), the most used first by the frequency sketch and the
// uses not yet folded into it: what a node that hands its keys over sends
// first, so that the keys that matter most arrive before its time runs
// out. It holds the writer lock only while it reads the policy (a few
// nanoseconds per key held); keep is called after.
func (c *Cache) Keys(max int, keep func(key string) bool) []string {
	all := c.heldRanked()
	if keep != nil {
		all = slices.DeleteFunc(all, func(r ranked) bool { return !keep(r.key) })
	}
	slices.SortStableFunc(all, func(a, b ranked) int { return cmp.Compare(b.uses, a.uses) })
	keys := make([]string, 0, min(max, len(all)))
	for _, r := range all[:min(max, len(all))] {
		keys = append(keys, r.key)
	}
	return keys
}

type ranked struct {
	key  string
	uses uint64
}

// heldRanked is the part of Keys under the writer lock: each key held with
// its estimate plus its unfolded uses.
func (c *Cache) heldRanked() []ranked {
	c.mu.Lock()
	defer c.mu.Unlock()
	all := make([]ranked, 0, c.items.Load())
	for _, n := range c.policy.nodes {
		if n.e != nil {
			all = append(all, ranked{n.e.key, c.policy.sketch.estimate(n.e.hash) + uint64(n.e.uses.Load())})
		}
	}
	return all
}
