// Package lru is the byte-counted memory behind a cache group: a sharded
// map whose eviction order approximates least-recently-used with the CLOCK
// (second chance) algorithm.
//
// A hit takes only its shard's read lock and marks the entry as referenced
// when it is not already, so hits on a hot key do not write to shared
// memory the way moving it to the front of a list would. Eviction sweeps a
// clock hand over each shard in turn, clearing reference bits and removing
// the first entry that has not been referenced since the hand last passed.
package lru

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// shardCount is a power of two: enough shards that two cores rarely meet on
// one lock, few enough that a small cache still evicts in near-LRU order.
const shardCount = 16

// Cache is a concurrency-safe map from string keys to immutable byte
// values that keeps count of the bytes it holds (key plus value lengths).
// It has no capacity of its own: the owner decides when to call EvictOne.
type Cache struct {
	seed      maphash.Seed
	shards    [shardCount]shard
	bytes     atomic.Int64
	items     atomic.Int64
	evictions atomic.Int64
	cursor    atomic.Uint32 // shard where the next eviction starts
}

type shard struct {
	mu    sync.RWMutex
	hits  atomic.Int64
	items map[string]*entry
	hand  *entry // next entry the clock looks at; entries form a ring
	// lapLeft is how many entries the hand passes before the clock moves
	// on to the next shard.
	lapLeft int
	_       [64]byte
}

type entry struct {
	key        string
	value      []byte
	referenced atomic.Bool
	prev, next *entry
}

// New returns an empty Cache.
func New() *Cache {
	c := &Cache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].items = make(map[string]*entry)
	}
	return c
}

func (c *Cache) shard(key string) *shard {
	return &c.shards[maphash.String(c.seed, key)&(shardCount-1)]
}

// Get returns the value of key and marks it recently used.
func (c *Cache) Get(key string) (value []byte, ok bool) {
	s := c.shard(key)
	s.mu.RLock()
	e := s.items[key]
	if e != nil {
		// Load before Store: a hot key's entry is written once per
		// clock sweep, not on every hit.
		if !e.referenced.Load() {
			e.referenced.Store(true)
		}
		value = e.value
	}
	s.mu.RUnlock()
	if e == nil {
		return nil, false
	}
	s.hits.Add(1)
	return value, true
}

// Peek returns the value of key without marking it used or counting a hit.
func (c *Cache) Peek(key string) (value []byte, ok bool) {
	s := c.shard(key)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.items[key]; e != nil {
		return e.value, true
	}
	return nil, false
}

// Add stores value under key, replacing any earlier value. The byte count
// changes by exactly the difference, so replacing never drifts it.
func (c *Cache) Add(key string, value []byte) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.items[key]; e != nil {
		c.bytes.Add(int64(len(value) - len(e.value)))
		e.value = value
		e.referenced.Store(true)
		return
	}
	e := &entry{key: key, value: value}
	s.items[key] = e
	if s.hand == nil {
		e.prev, e.next = e, e
		s.hand = e
	} else {
		// Just behind the hand: the new entry is the last the clock visits.
		e.prev, e.next = s.hand.prev, s.hand
		e.prev.next = e
		s.hand.prev = e
	}
	c.bytes.Add(Size(key, value))
	c.items.Add(1)
}

// Remove deletes key and reports whether it was present.
func (c *Cache) Remove(key string) bool {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.items[key]
	if e == nil {
		return false
	}
	c.unlink(s, e)
	return true
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
		s := &c.shards[c.cursor.Load()&(shardCount-1)]
		s.mu.Lock()
		for s.lapLeft > 0 && s.hand != nil {
			e := s.hand
			s.hand = e.next
			s.lapLeft--
			if e.referenced.Load() {
				e.referenced.Store(false)
				continue
			}
			c.evict(s, e)
			s.mu.Unlock()
			return true
		}
		s.lapLeft = len(s.items)
		s.mu.Unlock()
		c.cursor.Add(1)
	}
	// Gets kept setting bits faster than the hand cleared them: evict at
	// the hand regardless, so that the owner's budget still holds.
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		if e := s.hand; e != nil {
			c.evict(s, e)
			s.mu.Unlock()
			return true
		}
		s.mu.Unlock()
	}
	return false
}

func (c *Cache) evict(s *shard, e *entry) {
	c.unlink(s, e)
	c.evictions.Add(1)
}

// unlink removes e from s; s.mu must be held for writing.
func (c *Cache) unlink(s *shard, e *entry) {
	delete(s.items, e.key)
	if e.next == e {
		s.hand = nil
	} else {
		e.prev.next = e.next
		e.next.prev = e.prev
		if s.hand == e {
			s.hand = e.next
		}
	}
	e.prev, e.next = nil, nil
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
