package lru

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

func TestAddGetReplaceAccounting(t *testing.T) {
	c := New()
	c.Add("a", []byte("12345"))
	c.Add("bb", []byte("1"))
	if got, want := c.Bytes(), int64(1+5+2+1); got != want {
		t.Fatalf("Bytes = %d, want %d", got, want)
	}
	// Replacing with a longer, then a shorter value must not drift.
	c.Add("a", []byte("1234567890"))
	c.Add("a", []byte("x"))
	if got, want := c.Bytes(), int64(1+1+2+1); got != want {
		t.Fatalf("after replace Bytes = %d, want %d", got, want)
	}
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
	if v, ok := c.Get("a"); !ok || string(v) != "x" {
		t.Fatalf("Get(a) = %q, %v", v, ok)
	}
	if !c.Remove("a") || c.Remove("a") {
		t.Fatal("Remove should report presence once")
	}
	if _, ok := c.Get("a"); ok {
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
	c := New()
	c.Add("k", []byte("v"))
	if _, ok := c.Peek("k"); !ok {
		t.Fatal("Peek missed")
	}
	if c.Hits() != 0 {
		t.Fatalf("Peek counted a hit")
	}
	// Not referenced: the first eviction takes it.
	if !c.EvictOne() || c.Len() != 0 {
		t.Fatalf("EvictOne did not evict the untouched entry")
	}
}

func TestEvictPrefersUnreferenced(t *testing.T) {
	c := New()
	const n = 200
	for i := range n {
		c.Add(fmt.Sprint(i), []byte("v"))
	}
	// Touch the even keys; evict half the cache: only odd keys may go.
	for i := 0; i < n; i += 2 {
		c.Get(fmt.Sprint(i))
	}
	for range n / 2 {
		if !c.EvictOne() {
			t.Fatal("EvictOne found nothing")
		}
	}
	for i := 0; i < n; i += 2 {
		if _, ok := c.Peek(fmt.Sprint(i)); !ok {
			t.Fatalf("recently used key %d was evicted", i)
		}
	}
	if c.Evictions() != n/2 {
		t.Fatalf("Evictions = %d, want %d", c.Evictions(), n/2)
	}
}

func TestEvictEmpty(t *testing.T) {
	if New().EvictOne() {
		t.Fatal("EvictOne on an empty cache reported an eviction")
	}
}

// TestAccountingMatchesModel runs random operations and checks the byte and
// item counts against a plain map after each one.
func TestAccountingMatchesModel(t *testing.T) {
	c := New()
	model := map[string][]byte{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		key := fmt.Sprint(r.IntN(300))
		switch r.IntN(4) {
		case 0, 1:
			v := make([]byte, r.IntN(50))
			c.Add(key, v)
			model[key] = v
		case 2:
			c.Remove(key)
			delete(model, key)
		case 3:
			if c.EvictOne() {
				forgetEvicted(c, model)
			}
		}
		checkModel(t, i, c, model)
	}
}

// forgetEvicted drops from model the keys that c no longer holds.
func forgetEvicted(c *Cache, model map[string][]byte) {
	for k := range model {
		if _, ok := c.Peek(k); !ok {
			delete(model, k)
		}
	}
}

// checkModel fails unless c's byte and item counts are model's.
func checkModel(t *testing.T, op int, c *Cache, model map[string][]byte) {
	t.Helper()
	var bytes int64
	for k, v := range model {
		bytes += Size(k, v)
	}
	if c.Bytes() != bytes || c.Len() != int64(len(model)) {
		t.Fatalf("op %d: Bytes = %d, Len = %d; model %d, %d", op, c.Bytes(), c.Len(), bytes, len(model))
	}
}

func TestConcurrentUse(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := fmt.Sprint((i * (w + 1)) % 97)
				switch i % 5 {
				case 0:
					c.Add(k, []byte(k))
				case 1:
					c.EvictOne()
				case 2:
					c.Remove(k)
				default:
					if v, ok := c.Get(k); ok && string(v) != k {
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
		if v, ok := c.Peek(fmt.Sprint(i)); ok {
			want += Size(fmt.Sprint(i), v)
		}
	}
	if c.Bytes() != want {
		t.Fatalf("Bytes = %d, want %d", c.Bytes(), want)
	}
}

func TestGetAllocatesNothing(t *testing.T) {
	c := New()
	c.Add("key", []byte("value"))
	if n := testing.AllocsPerRun(100, func() { c.Get("key") }); n != 0 {
		t.Fatalf("Get allocates %v times", n)
	}
}

func BenchmarkGetParallel(b *testing.B) {
	c := New()
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprint("key-", i)
		c.Add(keys[i], make([]byte, 64))
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
	c := New()
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
				if v, ok := c.Get(k); ok && string(v) != k {
					t.Errorf("Get(%s) = %s", k, v)
					return
				}
			}
		})
	}
	for round := range 3 {
		for i := range keys {
			c.Add(fmt.Sprint(i), []byte(fmt.Sprint(i)))
		}
		if c.Len() != keys {
			t.Errorf("round %d: Len = %d after adding %d keys", round, c.Len(), keys)
		}
		gone := 0
		for i := range keys {
			if i%2 == 0 && c.Remove(fmt.Sprint(i)) || i%2 == 1 && c.EvictOne() {
				gone++
			}
		}
		for c.EvictOne() {
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
