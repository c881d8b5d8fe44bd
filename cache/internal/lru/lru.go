// Package lru is the byte-counted memory behind a cache group: a sharded
// hash table whose eviction order approximates least-recently-used with
// the CLOCK (second chance) algorithm.
//
// A hit takes no lock and writes nothing shared but a per-shard hit
// counter: readers walk an open-addressing table of atomic pointers to
// immutable entries, and set an entry's reference bit only when it is not
// already set, so hits on a hot key do not bounce a lock's cache line
// between cores the way a read lock, or moving the key to the front of a
// list, would. Writers take their shard's mutex, replace entries whole, and
// publish a new table when one grows. Eviction sweeps a clock hand over
// each shard in turn, clearing reference bits and removing the first entry
// not referenced since the hand last passed it.
package lru

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

const (
	shardBits  = 4 // 16 shards: writers on two cores rarely meet
	shardCount = 1 << shardBits
	minSlots   = 8
)

// Cache is a concurrency-safe map from string keys to immutable byte
// values that keeps count of the bytes it holds (key plus value lengths).
// It has no capacity of its own: the owner decides when to call EvictOne.
type Cache struct {
	seed      maphash.Seed
	shards    [shardCount]shard
	bytes     atomic.Int64
	items     atomic.Int64
	evictions atomic.Int64
	cursor    atomic.Uint32 // shard the clock hand is in
}

type shard struct {
	// table is read on every Get: it shares its cache line with nothing
	// that a Get writes, so the line stays in every core's cache.
	table atomic.Pointer[table]
	_     [56]byte
	hits  atomic.Int64 // written on every hit: a line of its own
	_     [56]byte

	mu      sync.Mutex // serialises writers; readers never take it
	live    int        // entries in the table
	used    int        // live entries plus tombstones
	hand    int        // next slot the clock looks at
	lapLeft int        // slots the hand passes before the clock moves on to the next shard
	_       [64]byte
}

// A table is an open-addressing hash table with linear probing. Slots hold
// nil (never used), tomb (deleted) or a live entry. At least a quarter of
// the slots are nil, so every probe ends.
type table struct {
	slots []atomic.Pointer[entry]
	mask  uint64
	tomb  *entry
}

// An entry is never changed once published, except its reference bit.
type entry struct {
	hash       uint64
	key        string
	value      []byte
	referenced atomic.Bool
}

func newTable(slots int) *table {
	return &table{slots: make([]atomic.Pointer[entry], slots), mask: uint64(slots - 1), tomb: new(entry)}
}

// New returns an empty Cache.
func New() *Cache {
	c := &Cache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].table.Store(newTable(minSlots))
	}
	return c
}

// locate hashes key once: the top bits pick the shard, the low bits the
// first slot.
func (c *Cache) locate(key string) (*shard, uint64) {
	h := maphash.String(c.seed, key)
	return &c.shards[h>>(64-shardBits)], h
}

// find returns key's entry in t, or nil.
func (t *table) find(h uint64, key string) *entry {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return nil
		}
		if e.hash == h && e != t.tomb && e.key == key {
			return e
		}
	}
}

// Get returns the value of key and marks it recently used.
func (c *Cache) Get(key string) (value []byte, ok bool) {
	s, h := c.locate(key)
	e := s.table.Load().find(h, key)
	if e == nil {
		return nil, false
	}
	// Load before Store: a hot key's entry is written once per clock
	// sweep, not on every hit.
	if !e.referenced.Load() {
		e.referenced.Store(true)
	}
	s.hits.Add(1)
	return e.value, true
}

// Peek returns the value of key without marking it used or counting a hit.
func (c *Cache) Peek(key string) (value []byte, ok bool) {
	s, h := c.locate(key)
	if e := s.table.Load().find(h, key); e != nil {
		return e.value, true
	}
	return nil, false
}

// Add stores value under key, replacing any earlier value. The byte count
// changes by exactly the difference, so replacing never drifts it.
func (c *Cache) Add(key string, value []byte) {
	s, h := c.locate(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.table.Load()
	insert := -1
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			if insert < 0 {
				insert = int(i)
				s.used++
			}
			break
		}
		if e == t.tomb {
			if insert < 0 {
				insert = int(i)
			}
			continue
		}
		if e.hash == h && e.key == key {
			ne := &entry{hash: h, key: key, value: value}
			ne.referenced.Store(true)
			t.slots[i].Store(ne)
			c.bytes.Add(int64(len(value) - len(e.value)))
			return
		}
	}
	t.slots[insert].Store(&entry{hash: h, key: key, value: value})
	s.live++
	c.bytes.Add(Size(key, value))
	c.items.Add(1)
	if s.used*4 >= len(t.slots)*3 {
		s.rehash(t)
	}
}

// rehash publishes a new table sized for the live entries, without
// tombstones. Readers still walking the old one see a consistent, if
// slightly stale, snapshot. s.mu must be held.
func (s *shard) rehash(old *table) {
	n := minSlots
	for n < s.live*2 {
		n *= 2
	}
	t := newTable(n)
	for i := range old.slots {
		e := old.slots[i].Load()
		if e == nil || e == old.tomb {
			continue
		}
		j := e.hash & t.mask
		for t.slots[j].Load() != nil {
			j = (j + 1) & t.mask
		}
		t.slots[j].Store(e)
	}
	s.table.Store(t)
	s.used, s.hand, s.lapLeft = s.live, 0, 0
}

// Remove deletes key and reports whether it was present.
func (c *Cache) Remove(key string) bool {
	s, h := c.locate(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.table.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return false
		}
		if e.hash == h && e != t.tomb && e.key == key {
			c.unlink(s, t, i, e)
			return true
		}
	}
}

// EvictOne removes one entry that has not been used since the clock hand
// last passed it, and reports whether the cache had anything to evict.
//
// The hand makes a full lap of one shard before it moves to the next, so
// across shards the order stays close to one global clock: a recently used
// entry is not evicted while an unused one waits in another shard.
func (c *Cache) EvictOne() bool {
	// Each shard needs at most three visits: one to start its lap, one to
	// clear its bits, one to evict.
	for range 3*shardCount + 1 {
		s := &c.shards[c.cursor.Load()%shardCount]
		s.mu.Lock()
		t := s.table.Load()
		for ; s.lapLeft > 0 && s.live > 0; s.lapLeft-- {
			i := uint64(s.hand)
			s.hand = (s.hand + 1) % len(t.slots)
			e := t.slots[i].Load()
			if e == nil || e == t.tomb {
				continue
			}
			if e.referenced.Load() {
				e.referenced.Store(false)
				continue
			}
			s.lapLeft--
			c.unlink(s, t, i, e)
			c.evictions.Add(1)
			s.mu.Unlock()
			return true
		}
		s.lapLeft = len(t.slots)
		s.mu.Unlock()
		c.cursor.Add(1)
	}
	// Gets kept setting bits faster than the hand cleared them: evict the
	// first live entry regardless, so that the owner's budget holds.
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		t := s.table.Load()
		for j := range t.slots {
			if e := t.slots[j].Load(); e != nil && e != t.tomb {
				c.unlink(s, t, uint64(j), e)
				c.evictions.Add(1)
				s.mu.Unlock()
				return true
			}
		}
		s.mu.Unlock()
	}
	return false
}

// unlink replaces e, at slot i of t, with a tombstone; s.mu must be held.
func (c *Cache) unlink(s *shard, t *table, i uint64, e *entry) {
	t.slots[i].Store(t.tomb)
	s.live--
	c.bytes.Add(-Size(e.key, e.value))
	c.items.Add(-1)
}

// Size is the number of bytes an entry is charged: its key and value.
func Size(key string, value []byte) int64 { return int64(len(key) + len(value)) }

// Bytes returns the bytes held (keys plus values).
func (c *Cache) Bytes() int64 { return c.bytes.Load() }

// Len returns the number of entries.
func (c *Cache) Len() int64 { return c.items.Load() }

// Evictions returns how many entries EvictOne has removed.
func (c *Cache) Evictions() int64 { return c.evictions.Load() }

// Hits returns how many Gets found their key.
func (c *Cache) Hits() int64 {
	var n int64
	for i := range c.shards {
		n += c.shards[i].hits.Load()
	}
	return n
}
