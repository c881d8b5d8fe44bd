package lru

import (
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

// BenchmarkKeysLockHold is how long Keys holds the writer lock (which
// every miss's Add waits for) over a cache of 2^20 one-byte entries with
// mixed uses: it times heldRanked, the part of Keys between its Lock and
// Unlock, uncontended, and reports the shortest and the median hold (the
// mean, ns/op, takes in the collector's cycles). warm calls Keys back to
// back, so each call reuses the memory the one before used; cold first
// returns the free memory to the system (debug.FreeOSMemory), as it is
// when a ring changes minutes after the last change. The entries were
// allocated one after the other, so the walk over them is kinder to the
// processor's cache than in a cache that has lived.
func BenchmarkKeysLockHold(b *testing.B) {
	c := fillForKeys(1 << 20)
	for _, cold := range []bool{false, true} {
		b.Run(map[bool]string{false: "warm", true: "cold"}[cold], func(b *testing.B) {
			var holds []time.Duration
			for b.Loop() {
				if cold {
					b.StopTimer()
					debug.FreeOSMemory()
					b.StartTimer()
				}
				start := time.Now()
				c.heldRanked()
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
// handover calls it (every key, no filter).
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
