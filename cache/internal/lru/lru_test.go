package lru

import (
	"fmt"
	"sync"
	"testing"
)

func TestAddGetReplaceAccounting(t *testing.T) {
	c := New(false)
	c.Add("a", []byte("12345"), 0)
	c.Add("bb", []byte("1"), 0)
	if got, want := c.Bytes(), int64(1+5+2+1); got != want {
		t.Fatalf("Bytes = %d, want %d", got, want)
	}
	// Replacing with a longer, then a shorter value must not drift.
	c.Add("a", []byte("1234567890"), 0)
	c.Add("a", []byte("x"), 0)
	if got, want := c.Bytes(), int64(1+1+2+1); got != want {
		t.Fatalf("after replace Bytes = %d, want %d", got, want)
	}
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
	if v, _, ok := c.Get("a"); !ok || string(v) != "x" {
		t.Fatalf("Get(a) = %q, %v", v, ok)
	}
	if !c.Remove("a") || c.Remove("a") {
		t.Fatal("Remove should report presence once")
	}
	if _, _, ok := c.Get("a"); ok {
		t.Fatal("removed key still present")
	}
	if got := c.Bytes(); got != 3 {
		t.Fatalf("Bytes after remove = %d, want 3", got)
	}
	if c.Hits() != 1 {
		t.Fatalf("Hits = %d, want 1", c.Hits())
	}
}

func TestPeekDoesNotCountOrTouch(t *testing.T) {
	c := New(false)
	c.Add("k", []byte("v"), 0)
	if _, _, ok := c.Peek("k"); !ok {
		t.Fatal("Peek missed")
	}
	if c.Hits() != 0 {
		t.Fatalf("Peek counted a hit")
	}
	// Not referenced: the first eviction takes it.
	if !c.EvictOne(0) || c.Len() != 0 {
		t.Fatalf("EvictOne did not evict the untouched entry")
	}
}

// filled returns a cache holding the keys "0" to n-1, one byte each.
func filled(n int) *Cache {
	c := New(false)
	for i := range n {
		c.Add(fmt.Sprint(i), []byte("v"), 0)
	}
	return c
}

// evictOddsWorth evicts all but one of the odd keys' worth from a cache
// filled with n keys whose even keys were used, and fails if an even key
// went: only odd keys may. (The newest key is the window's candidate;
// whether the sketch admits it depends on hash collisions, so one eviction
// is left as slack for it.)
func evictOddsWorth(t *testing.T, c *Cache, n int) {
	t.Helper()
	for range n/2 - 1 {
		if !c.EvictOne(0) {
			t.Fatal("EvictOne found nothing")
		}
	}
	for i := 0; i < n; i += 2 {
		if _, _, ok := c.Peek(fmt.Sprint(i)); !ok {
			t.Fatalf("key %d, used, was evicted before keys not used", i)
		}
	}
}

func TestEvictPrefersUnreferenced(t *testing.T) {
	const n = 200
	c := filled(n)
	for i := 0; i < n; i += 2 {
		c.Get(fmt.Sprint(i))
	}
	evictOddsWorth(t, c, n)
	if c.Evictions() != n/2-1 {
		t.Fatalf("Evictions = %d, want %d", c.Evictions(), n/2-1)
	}
}

// Use counts a use as a Get does, so the hand passes the entry once, but
// counts no hit; a key not held is left alone.
func TestUseCountsAUseNotAHit(t *testing.T) {
	const n = 200
	c := filled(n)
	for i := 0; i < n; i += 2 {
		c.Use(fmt.Sprint(i))
	}
	c.Use("absent")
	if c.Hits() != 0 || c.Len() != n {
		t.Fatalf("after Use: %d hits, %d entries; want 0 and %d", c.Hits(), c.Len(), n)
	}
	if _, _, ok := c.Peek("absent"); ok {
		t.Fatal("Use of a key not held added it")
	}
	evictOddsWorth(t, c, n)
}

func TestEvictEmpty(t *testing.T) {
	if New(false).EvictOne(0) {
		t.Fatal("EvictOne on an empty cache reported an eviction")
	}
}

func TestConcurrentUse(t *testing.T) {
	c := New(false)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprint((i * (w + 1)) % 97)
				switch i % 5 {
				case 0:
					c.Add(k, []byte(k), 0)
				case 1:
					c.EvictOne(0)
				case 2:
					c.Remove(k)
				default:
					if v, _, ok := c.Get(k); ok && string(v) != k {
						t.Errorf("Get(%s) = %s", k, v)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	var want int64
	for i := range 97 {
		if v, _, ok := c.Peek(fmt.Sprint(i)); ok {
			want += c.Charge(fmt.Sprint(i), v)
		}
	}
	if c.Bytes() != want {
		t.Fatalf("Bytes = %d, want %d", c.Bytes(), want)
	}
}

func TestGetAllocatesNothing(t *testing.T) {
	c := New(false)
	c.Add("key", []byte("value"), 0)
	if n := testing.AllocsPerRun(100, func() { c.Get("key") }); n != 0 {
		t.Fatalf("Get allocates %v times", n)
	}
}

func BenchmarkGetParallel(b *testing.B) {
	c := New(false)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprint("key-", i)
		c.Add(keys[i], make([]byte, 64), 0)
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Get(keys[i&1023])
			i++
		}
	})
}

// TestReadersDuringGrowthAndShrink has readers check every value they see
// while writers grow the tables to thousands of keys and empty them again.
func TestReadersDuringGrowthAndShrink(t *testing.T) {
	c := New(false)
	const keys = 5000
	var wg sync.WaitGroup
	done := make(chan struct{})
	for r := range 2 {
		wg.Go(func() {
			for i := r; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				k := fmt.Sprint(i % keys)
				if v, _, ok := c.Get(k); ok && string(v) != k {
					t.Errorf("Get(%s) = %s", k, v)
					return
				}
			}
		})
	}
	for round := range 3 {
		for i := range keys {
			c.Add(fmt.Sprint(i), []byte(fmt.Sprint(i)), 0)
		}
		if c.Len() != keys {
			t.Errorf("round %d: Len = %d after adding %d keys", round, c.Len(), keys)
		}
		gone := 0
		for i := range keys {
			if i%2 == 0 && c.Remove(fmt.Sprint(i)) || i%2 == 1 && c.EvictOne(0) {
				gone++
			}
		}
		for c.EvictOne(0) {
			gone++
		}
		if gone != keys || c.Len() != 0 || c.Bytes() != 0 {
			t.Errorf("round %d: %d entries went of %d; Len = %d, Bytes = %d after removing all",
				round, gone, keys, c.Len(), c.Bytes())
		}
	}
	close(done)
	wg.Wait()
}
