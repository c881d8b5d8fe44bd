package lru

import (
	"fmt"
	"runtime"
	"testing"
)

// measureOverhead returns the heap bytes per entry that a cache of n
// entries holds beyond its keys and values: keys and values are allocated
// before the first reading, so the difference is the cache's own memory.
// With expiring, every entry has an expiry, so it is in the expiry heap.
func measureOverhead(n int, expiring bool) float64 {
	keys := make([]string, n)
	values := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%09d", i)
		values[i] = make([]byte, 16)
	}
	var exp int64
	if expiring {
		exp = 1
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := New(false)
	for i := range keys {
		c.Add(keys[i], values[i], exp)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keys)
	runtime.KeepAlive(values)
	runtime.KeepAlive(c)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// TestEntryOverhead measures the memory an entry takes beyond its key and
// value at several sizes (see it with -v), and checks that EntryOverhead
// covers it without overstating it by more than a third.
func TestEntryOverhead(t *testing.T) {
	sizes := []int{10_000, 100_000, 300_000}
	if raceEnabled {
		sizes = sizes[:1]
	}
	for _, n := range sizes {
		for _, expiring := range []bool{false, true} {
			got := measureOverhead(n, expiring)
			t.Logf("%d entries, expiring %v: %.1f bytes per entry beyond key and value", n, expiring, got)
			if got > EntryOverhead || got < EntryOverhead*2/3 {
				t.Errorf("%d entries, expiring %v: overhead %.1f bytes, EntryOverhead %d", n, expiring, got, EntryOverhead)
			}
		}
	}
}
