package lru

import (
	"cmp"
	"fmt"
	"runtime/debug"
	"slices"
	"testing"
	"time"
)

// Keys lists the keys held, the most used first, up to its max and
// filtered by keep; removed and evicted keys are not listed.
func TestKeysMostUsedFirst(t *testing.T) {
	c := New(false)
	if got := c.Keys(10, nil); len(got) != 0 {
		t.Fatalf("Keys of an empty cache = %q", got)
	}
	for i := range 20 {
		c.Add(fmt.Sprint("k", i), []byte("v"), 0)
	}
	for range 3 {
		c.Get("k7")
	}
	c.Credit("k3", 10)
	c.Credit("k12", 5)
	c.Remove("k5")
	got := c.Keys(3, nil)
	if want := []string{"k3", "k12", "k7"}; !slices.Equal(got, want) {
		t.Errorf("Keys(3) = %q; want %q", got, want)
	}
	all := c.Keys(100, nil)
	if len(all) != 19 || slices.Contains(all, "k5") {
		t.Errorf("Keys(100) = %d keys (%q); want the 19 held", len(all), all)
	}
	even := c.Keys(100, func(k string) bool { return k[len(k)-1]%2 == 0 })
	if len(even) != 10 || even[0] != "k12" {
		t.Errorf("Keys with a filter = %q; want the 10 even ones, k12 first", even)
	}
}

// fillForKeys returns a cache of n one-byte entries with mixed uses: a
// third used once since the policy last saw them, every seventh credited
// a few uses, so that Keys has ties and distinct counts to rank.
func fillForKeys(n int) *Cache {
	c := New(false)
	for i := range n {
		c.Add(fmt.Sprint("k", i), []byte("v"), 0)
	}
	for i := 0; i < n; i += 3 {
		c.Get(fmt.Sprint("k", i))
	}
	for i := 0; i < n; i += 7 {
		c.Credit(fmt.Sprint("k", i), uint32(i%5))
	}
	return c
}

// Keys ranks exactly as the policy's estimates plus the unfolded uses
// say, read under the lock, ties in the order of the policy's nodes: a
// reference ranking computed here from the same sketch and entries, for a
// cache with mixed uses, removals whose nodes are reused, and evictions
// that folded uses into the sketch.
func TestKeysRankLikeTheEstimates(t *testing.T) {
	c := New(false)
	const n = 3000
	for i := range n {
		c.Add(fmt.Sprint("k", i), []byte("v"), 0)
	}
	for i := range n {
		for range i % 4 {
			c.Get(fmt.Sprint("k", i))
		}
		if i%11 == 0 {
			c.Credit(fmt.Sprint("k", i), uint32(i%9))
		}
		if i%13 == 0 {
			c.Remove(fmt.Sprint("k", i))
		}
	}
	for i := range n / 10 {
		c.Add(fmt.Sprint("new", i), []byte("v"), 0) // into the removed keys' nodes
	}
	for range 100 {
		c.EvictOne(0)
	}
	for i := 0; i < n; i += 5 {
		c.Get(fmt.Sprint("k", i))
	}
	want := referenceRanking(c)
	var ties, ranks int
	for i := 1; i < len(want); i++ {
		if want[i].rank == want[i-1].rank {
			ties++
		} else {
			ranks++
		}
	}
	if ties < 100 || ranks < 5 {
		t.Fatalf("%d ties and %d distinct ranks: the test needs both", ties, ranks)
	}
	if got := c.Keys(len(want)+1, nil); !slices.Equal(got, keysOf(want)) {
		t.Errorf("Keys differs from the reference ranking (%d keys, want %d)", len(got), len(want))
	}
	if got := c.Keys(50, nil); !slices.Equal(got, keysOf(want[:50])) {
		t.Errorf("Keys(50) = %q; want %q", got, keysOf(want[:50]))
	}
	odd := func(k string) bool { return k[len(k)-1]%2 == 1 }
	wantOdd := slices.DeleteFunc(slices.Clone(want), func(r refRank) bool { return !odd(r.key) })
	if got := c.Keys(len(want), odd); !slices.Equal(got, keysOf(wantOdd)) {
		t.Errorf("Keys with a filter differs from the reference ranking (%d keys, want %d)", len(got), len(wantOdd))
	}
	if slices.Contains(c.Keys(len(want), nil), "k13") {
		t.Errorf("Keys lists k13, which was removed")
	}
}

// A refRank is a key and its rank in referenceRanking.
type refRank struct {
	key  string
	rank uint64
}

// referenceRanking is the ranking Keys must return, computed from the
// policy under the lock: each key held, by its estimate in the sketch plus
// its unfolded uses, the most first, ties in the order of the nodes.
func referenceRanking(c *Cache) []refRank {
	var want []refRank
	c.mu.Lock()
	for _, nd := range c.policy.nodes {
		if nd.e != nil {
			want = append(want, refRank{nd.e.key, c.policy.sketch.estimate(nd.e.hash) + uint64(nd.e.uses.Load())})
		}
	}
	c.mu.Unlock()
	slices.SortStableFunc(want, func(a, b refRank) int { return cmp.Compare(b.rank, a.rank) })
	return want
}

// keysOf returns the keys of rs, in order.
func keysOf(rs []refRank) []string {
	var ks []string
	for _, r := range rs {
		ks = append(ks, r.key)
	}
	return ks
}

// The sketch Keys ranks with is the cache's, whole, even if it grew or was
// cleared between keysRoom, which sizes the copy, and heldRanked.
func TestKeysCopyTheSketchThatChanged(t *testing.T) {
	c := New(false)
	add := func(from, to int) {
		for i := from; i < to; i++ {
			c.Add(fmt.Sprint("k", i), []byte("v"), 0)
			c.Credit(fmt.Sprint("k", i), uint32(i%7))
		}
	}
	check := func(change func()) {
		t.Helper()
		all, rows := c.keysRoom()
		change()
		got, s := c.heldRanked(all, rows)
		for i := range s.rows {
			if !slices.Equal(s.rows[i], c.policy.sketch.rows[i]) {
				t.Fatalf("row %d of the copy: %d words, not the sketch's %d", i, len(s.rows[i]), len(c.policy.sketch.rows[i]))
			}
		}
		if int64(len(got)) != c.Len() {
			t.Fatalf("heldRanked listed %d entries; the cache holds %d", len(got), c.Len())
		}
	}
	add(0, 100)
	check(func() { add(100, 1000) }) // the sketch grows, twice
	check(func() { c.Clear(); add(0, 10) })
}

// BenchmarkKeysLockHold is how long Keys holds the writer lock (which
// every miss's Add waits for) over a cache of 2^20 one-byte entries with
// mixed uses: it times heldRanked, the part of Keys between its Lock and
// Unlock, uncontended, and reports the shortest and the median hold (the
// mean, ns/op, takes in the collector's cycles). warm calls Keys back to
// back, so each call reuses the memory the one before used; cold first
// returns the free memory to the system (debug.FreeOSMemory), as it is
// when a ring changes minutes after the last change. The entries were
// allocated one after the other, so the walk over them is kinder to the
// processor's cache than in a cache that has lived. On a shared 2-core
// machine, the shortest hold of 15 calls in four runs: warm 5.7-6.6 ms,
// cold 6.4-6.9, where main's Keys held it 20-26 and 40-62 ms, reading
// each entry's counters under the lock (docs/performance.md, "The offer").
func BenchmarkKeysLockHold(b *testing.B) {
	c := fillForKeys(1 << 20)
	for _, cold := range []bool{false, true} {
		b.Run(map[bool]string{false: "warm", true: "cold"}[cold], func(b *testing.B) {
			var holds []time.Duration
			for b.Loop() {
				b.StopTimer()
				if cold {
					debug.FreeOSMemory()
				}
				all, rows := c.keysRoom() // as Keys does, before the lock
				b.StartTimer()
				start := time.Now()
				c.heldRanked(all, rows)
				holds = append(holds, time.Since(start))
			}
			reportTimes(b, holds)
		})
	}
}

// reportTimes reports the shortest and the median of times, in ms.
func reportTimes(b *testing.B, times []time.Duration) {
	slices.Sort(times)
	b.ReportMetric(float64(times[0].Microseconds())/1000, "min-ms")
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkKeys is the whole of Keys over the same cache, as the
// offer calls it (every key, no filter).
func BenchmarkKeys(b *testing.B) {
	c := fillForKeys(1 << 20)
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		c.Keys(1<<20, nil)
		times = append(times, time.Since(start))
	}
	reportTimes(b, times)
}
