package cache

import (
	"fmt"
	"testing"

	"github.com/geecache/geecache/cache/internal/lru"
)

// TestMemoryBudget fills a memory with more than its budget, in both
// caches, and checks that the bytes charged never pass the budget, with
// and without the per-entry overhead counted, and that counting it charges
// each entry lru.EntryOverhead more.
func TestMemoryBudget(t *testing.T) {
	const budget = 10_000
	for _, overhead := range []bool{false, true} {
		m := newMemory(budget, overhead)
		value := make([]byte, 20)
		for i := range 1000 {
			c := m.main
			if i%5 == 0 {
				c = m.hot
			}
			m.add(c, fmt.Sprintf("key-%03d", i), value, 0, 0, 0)
			if total := m.main.Bytes() + m.hot.Bytes(); total > budget {
				t.Fatalf("overhead %v: %d bytes held, budget %d", overhead, total, budget)
			}
		}
		perEntry := int64(len("key-999") + len(value))
		if overhead {
			perEntry += lru.EntryOverhead
		}
		if got := m.main.Charge("key-999", value); got != perEntry {
			t.Fatalf("overhead %v: Charge = %d, want %d", overhead, got, perEntry)
		}
		if n := m.main.Len() + m.hot.Len(); n > budget/perEntry || n < budget/perEntry/2 {
			t.Fatalf("overhead %v: %d entries held, for %d bytes each in a budget of %d", overhead, n, perEntry, budget)
		}
	}
}

// TestMemoryEvictsExpiredFirst checks that add makes room by evicting an
// entry that has expired before any other, even when it is in the main
// cache and the hot cache is the one over its share, and that get
// reports expiry.
func TestMemoryEvictsExpiredFirst(t *testing.T) {
	value := make([]byte, 10)
	m := newMemory(4*int64(len("a")+len(value)), false)
	m.add(m.main, "a", value, 0, 0, 0)
	m.add(m.main, "b", value, 0, 50, 0)
	m.add(m.hot, "c", value, 0, 0, 0)
	m.add(m.hot, "d", value, 0, 0, 0)
	for _, k := range []string{"a", "b", "c", "d"} {
		m.get(k)
	}
	m.add(m.main, "e", value, 0, 0, 60) // at 60, b has expired
	if _, _, ok := m.peek("b"); ok {
		t.Fatal("b, expired, is still held")
	}
	for _, k := range []string{"a", "c", "d", "e"} {
		if _, _, ok := m.peek(k); !ok {
			t.Fatalf("%s was evicted instead of the expired b", k)
		}
	}
	if _, exp, ok := m.get("e"); !ok || exp != 0 {
		t.Fatalf("get(e) = expiry %d, %v", exp, ok)
	}
	if _, exp, ok := m.peek("nothing"); ok || exp != 0 {
		t.Fatalf("peek of a missing key = expiry %d, %v", exp, ok)
	}
}
