package lru

import (
	"cmp"
	"slices"
)

// Keys returns up to max of the keys held that keep returns true for
// (nil: every key), the most used first by the frequency sketch and the
// uses not yet folded into it: what a node that offers its keys sends
// first, so that the keys that matter most arrive before its time runs
// out. It holds the writer lock only while it copies the sketch's rows and
// each entry's unfolded uses (about 6 ms at 2^20 entries); keep, the
// estimates and the sort come after.
func (c *Cache) Keys(max int, keep func(key string) bool) []string {
	all := c.rank(max, keep)
	keys := make([]string, len(all))
	for i, r := range all {
		keys[i] = r.e.key
	}
	return keys
}

// KeysUses is Keys of every key with each key's uses as Keys ranks them
// (uses[i] is keys[i]'s): what a snapshot of the cache keeps, so that the
// cache it is restored into can credit each key its uses (Credit).
func (c *Cache) KeysUses(max int) (keys []string, uses []uint64) {
	all := c.rank(max, nil)
	keys, uses = make([]string, len(all)), make([]uint64, len(all))
	for i, r := range all {
		keys[i], uses[i] = r.e.key, r.uses
	}
	return keys, uses
}

// rank is Keys' ranking: up to max entries held that keep returns true
// for, the most used first.
func (c *Cache) rank(max int, keep func(key string) bool) []ranked {
	all, s := c.heldRanked(c.keysRoom())
	if keep != nil {
		all = slices.DeleteFunc(all, func(r ranked) bool { return !keep(r.e.key) })
	}
	for i := range all {
		all[i].uses += s.estimate(all[i].e.hash)
	}
	slices.SortStableFunc(all, func(a, b ranked) int { return cmp.Compare(b.uses, a.uses) })
	return all[:min(max, len(all))]
}

// A ranked is an entry held and its uses: first those not yet folded into
// the sketch, then plus its estimate.
type ranked struct {
	e    *entry
	uses uint64
}

// keysRoom makes the memory heldRanked fills: room for the entries held
// and a copy of each of the sketch's rows. It writes every page of it
// before heldRanked takes the lock, as the first write to a page the
// process has not used faults, about 10 ms for the 24 MiB of 2^20 entries
// (BenchmarkKeysLockHold/cold); and allocating under the lock could make
// Keys assist the collector there.
func (c *Cache) keysRoom() ([]ranked, [sketchDepth][]uint64) {
	c.mu.Lock()
	words := len(c.policy.sketch.rows[0])
	c.mu.Unlock()
	all := make([]ranked, c.items.Load())
	clear(all) // see above: the pages are written now, not under the lock
	var rows [sketchDepth][]uint64
	for i := range rows {
		rows[i] = make([]uint64, words)
		clear(rows[i])
	}
	return all[:0], rows
}

// heldRanked is the part of Keys under the writer lock: it appends to all
// each entry held with its unfolded uses, and returns a copy of the sketch,
// in rows, taken at the same time, so that the estimates read from the
// copy are those Keys would have read under the lock. Copying the four
// rows is a memcpy, where reading each entry's four counters in them is
// four reads far apart per entry (BenchmarkKeysLockHold). An entry's key
// and hash never change, so they can be read after.
func (c *Cache) heldRanked(all []ranked, rows [sketchDepth][]uint64) ([]ranked, sketch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.policy.sketch
	for i := range s.rows {
		if len(rows[i]) != len(s.rows[i]) { // it grew or was cleared since keysRoom
			rows[i] = make([]uint64, len(s.rows[i]))
		}
		copy(rows[i], s.rows[i])
		s.rows[i] = rows[i]
	}
	for _, n := range c.policy.nodes {
		if n.e != nil {
			all = append(all, ranked{n.e, uint64(n.e.uses.Load())})
		}
	}
	return all, s
}
