package lru

import (
	"fmt"
	"testing"
)

// addWithin adds key to c as an owner with a budget of budget bytes does:
// it evicts first, then adds.
func addWithin(c *Cache, budget int64, key string, value []byte, expires, now int64) {
	for c.Bytes()+c.Charge(key, value) > budget && c.EvictOne(now) {
	}
	c.Add(key, value, expires)
}

// TestScanKeepsFrequentKeys fills a cache with keys used several times,
// then streams five times as many keys used once through it: each new key
// has its turn in the window (it is still there when the next few keys
// arrive), and nearly all the frequent keys stay. An exact LRU would keep
// none of them.
func TestScanKeepsFrequentKeys(t *testing.T) {
	c := New(false)
	const n = 1000
	value := make([]byte, 10)
	budget := n * c.Charge("hot-0000", value)
	for i := range n {
		addWithin(c, budget, fmt.Sprintf("hot-%04d", i), value, 0, 0)
	}
	for range 3 {
		for i := range n {
			c.Get(fmt.Sprintf("hot-%04d", i))
		}
	}
	const newest = 5 // of the window's ~10 entries
	for i := range 5 * n {
		addWithin(c, budget, fmt.Sprintf("new-%04d", i), value, 0, 0)
		for j := max(0, i-newest+1); j <= i; j++ {
			if _, _, ok := c.Peek(fmt.Sprintf("new-%04d", j)); !ok {
				t.Fatalf("new-%04d was evicted %d additions after it came in", j, i-j)
			}
		}
	}
	kept := 0
	for i := range n {
		if _, _, ok := c.Peek(fmt.Sprintf("hot-%04d", i)); ok {
			kept++
		}
	}
	if kept < n*9/10 {
		t.Fatalf("%d of %d frequent keys left after a scan", kept, n)
	}
	if c.Bytes() > budget {
		t.Fatalf("Bytes = %d over the budget %d", c.Bytes(), budget)
	}
}

// TestEvictExpiredFirst checks that EvictOne takes expired entries first,
// earliest expiry first, even if they are used most, that a replaced
// entry's expiry is the new one's, and that EvictExpired evicts only
// expired entries.
func TestEvictExpiredFirst(t *testing.T) {
	c := New(false)
	for _, e := range []struct {
		key     string
		expires int64
	}{{"a", 30}, {"b", 10}, {"c", 0}, {"d", 20}, {"e", 15}} {
		c.Add(e.key, []byte("v"), e.expires)
		c.Get(e.key)
	}
	c.Add("e", []byte("v"), 100) // e no longer expires at 15
	present := func(k string) bool { _, _, ok := c.Peek(k); return ok }
	for _, step := range []struct {
		now  int64
		gone string
	}{{25, "b"}, {25, "d"}, {35, "a"}} {
		if !c.EvictOne(step.now) || present(step.gone) {
			t.Fatalf("EvictOne(%d) did not evict %s", step.now, step.gone)
		}
	}
	if !present("c") || !present("e") {
		t.Fatal("an entry that had not expired was evicted")
	}
	if _, exp, _ := c.Get("e"); exp != 100 {
		t.Fatalf("e expires at %d, want 100", exp)
	}
	if c.EvictExpired(50) || c.EvictExpired(0) {
		t.Fatal("EvictExpired evicted an entry that had not expired")
	}
	if !c.EvictExpired(100) || present("e") {
		t.Fatal("EvictExpired(100) did not evict e")
	}
	c.Add("e", []byte("v"), 0)
	c.Remove("e")
	if !c.EvictOne(200) || c.Len() != 0 {
		t.Fatal("the last entry was not evicted")
	}
	if c.EvictOne(200) {
		t.Fatal("EvictOne on an empty cache reported an eviction")
	}
}

// A cache that filled up without evicting gives up the newest of what its
// window held first, not what came first: entries come first because they
// were wanted first (an offer's offers rank keys most used first; a cold
// cache's first loads are of its popular keys). Before, the hand met the
// entries in the order they came, and took the first ones.
func TestFilledCacheEvictsItsNewestFirst(t *testing.T) {
	c := New(false)
	const n = 200
	for i := range n {
		c.Add(fmt.Sprintf("k%03d", i), []byte("v"), 0)
	}
	for range n / 4 {
		if !c.EvictOne(0) {
			t.Fatal("EvictOne found nothing")
		}
	}
	for i := range n / 2 {
		if _, _, ok := c.Peek(fmt.Sprintf("k%03d", i)); !ok {
			t.Errorf("k%03d, among the first half added, was evicted before the newer ones", i)
		}
	}
}

// A full cache that gains room (here by removals, as when keys it held move
// to another node or expire) takes the next entries without a duel. Once
// it is full again, each of them gets the duel it missed, against the
// hand's victim: those the sketch says are used more (here keys it held
// before) join the main queue behind the hand, as a winner does; the
// others are the first the hand meets, so they go before any entry that
// earned its place. Before, all of them joined the main queue's tail, and
// the hand gave up entries used before first; putting all of them before
// the hand gave up the keys coming back.
func TestEntriesThatCameInFreeAreMetFirst(t *testing.T) {
	c := New(false)
	const n, room = 200, 40
	value := []byte("v")
	budget := n * c.Charge("used-000", value)
	add := func(key string) { addWithin(c, budget, key, value, 0, 0) }
	for i := range n {
		add(fmt.Sprintf("used-%03d", i))
	}
	for i := range n {
		c.Get(fmt.Sprintf("used-%03d", i))
	}
	for range 3 {
		for i := range room / 2 {
			c.Get(fmt.Sprintf("used-%03d", i)) // the keys that come back: the most used
		}
	}
	add("scan-000") // an eviction: the hand folds every entry's uses
	for i := range room {
		c.Remove(fmt.Sprintf("used-%03d", i))
	}
	for i := range room / 2 { // the room is theirs: no eviction
		add(fmt.Sprintf("used-%03d", i)) // back: the sketch knows it
		add(fmt.Sprintf("new-%03d", i))
	}
	if e := c.Evictions(); e != 1 {
		t.Fatalf("Evictions = %d, want 1: the entries in the room must come in without one", e)
	}
	// The window holds its share, two entries: at most two evictions are
	// its candidates' duels; the rest are the hand's victims.
	const evict = room / 4
	for range evict {
		if !c.EvictOne(0) {
			t.Fatal("EvictOne found nothing")
		}
	}
	held := func(prefix string, from, to int) (k int) {
		for i := from; i < to; i++ {
			if _, _, ok := c.Peek(fmt.Sprintf("%s-%03d", prefix, i)); ok {
				k++
			}
		}
		return k
	}
	// One of the used entries may have lost the scan's duel.
	if got := held("used", room, n); got < n-room-1 {
		t.Errorf("%d of the %d entries used before are held after %d evictions: the hand took them before the entries that came in free", got, n-room, evict)
	}
	if got := held("used", 0, room/2); got != room/2 {
		t.Errorf("%d of the %d keys that came back are held after %d evictions: they went before keys new to the cache", got, room/2, evict)
	}
	if got := held("new", 0, room/2); got > room/2-evict+2 {
		t.Errorf("%d of the %d new keys are held after %d evictions", got, room/2, evict)
	}
}
