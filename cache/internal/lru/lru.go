// Package lru is the byte-counted memory behind a cache group: a sharded
// map whose eviction order approximates least-recently-used with the CLOCK
// (second chance) algorithm.
//
// A hit takes only its shard's read lock, finds the value inline in the
// map, and sets the entry's reference bit in a dense bitmap when it is not
// already set. So hits on a hot key do not write to shared memory the way
// moving it to the front of a list would, and a hit touches no per-entry
// heap object. Eviction sweeps a clock hand over each shard in turn,
// clearing reference bits and removing the first entry that has not been
// referenced since the hand last passed it.
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
	cursor    atomic.Uint32 // shard the clock hand is in
}

type shard struct {
	mu    sync.RWMutex
	hits  atomic.Int64
	items map[string]item
	// The clock: one slot per position; refs is a bitmap over positions,
	// set by readers with atomic operations under the read lock.
	slots   []slot
	refs    []uint64
	free    []uint32 // dead positions to reuse
	hand    int      // next position the clock looks at
	lapLeft int      // positions the hand passes before moving on to the next shard
	_       [64]byte
}

type item struct {
	value []byte
	pos   uint32
}

type slot struct {
	key  string
	live bool
}

// New returns an empty Cache.
func New() *Cache {
	c := &Cache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].items = make(map[string]item)
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
	it, ok := s.items[key]
	if ok {
		s.reference(it.pos)
	}
	s.mu.RUnlock()
	if ok {
		s.hits.Add(1)
	}
	return it.value, ok
}

// reference sets pos's bit; reading first means a hot entry's word is
// written once per clock sweep, not on every hit.
func (s *shard) reference(pos uint32) {
	w, bit := &s.refs[pos/64], uint64(1)<<(pos%64)
	if atomic.LoadUint64(w)&bit == 0 {
		atomic.OrUint64(w, bit)
	}
}

// referenced clears pos's bit and reports whether it was set.
func (s *shard) referenced(pos uint32) bool {
	w, bit := &s.refs[pos/64], uint64(1)<<(pos%64)
	return atomic.AndUint64(w, ^bit)&bit != 0
}

// Peek returns the value of key without marking it used or counting a hit.
func (c *Cache) Peek(key string) (value []byte, ok bool) {
	s := c.shard(key)
	s.mu.RLock()
	it, ok := s.items[key]
	s.mu.RUnlock()
	return it.value, ok
}

// Add stores value under key, replacing any earlier value. The byte count
// changes by exactly the difference, so replacing never drifts it.
func (c *Cache) Add(key string, value []byte) {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if it, ok := s.items[key]; ok {
		c.bytes.Add(int64(len(value) - len(it.value)))
		s.items[key] = item{value: value, pos: it.pos}
		s.reference(it.pos)
		return
	}
	var pos uint32
	if n := len(s.free); n > 0 {
		pos = s.free[n-1]
		s.free = s.free[:n-1]
		s.slots[pos] = slot{key: key, live: true}
	} else {
		pos = uint32(len(s.slots))
		s.slots = append(s.slots, slot{key: key, live: true})
		if int(pos/64) >= len(s.refs) {
			s.refs = append(s.refs, 0)
		}
	}
	s.items[key] = item{value: value, pos: pos}
	c.bytes.Add(Size(key, value))
	c.items.Add(1)
}

// Remove deletes key and reports whether it was present.
func (c *Cache) Remove(key string) bool {
	s := c.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[key]
	if ok {
		c.unlink(s, key, it)
	}
	return ok
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
		for ; s.lapLeft > 0 && len(s.items) > 0; s.lapLeft-- {
			pos := s.hand
			s.hand = (s.hand + 1) % len(s.slots)
			if !s.slots[pos].live || s.referenced(uint32(pos)) {
				continue
			}
			s.lapLeft--
			c.evict(s, s.slots[pos].key)
			s.mu.Unlock()
			return true
		}
		s.lapLeft = len(s.slots)
		s.mu.Unlock()
		c.cursor.Add(1)
	}
	// Gets kept setting bits faster than the hand cleared them: evict at
	// the first live position regardless, so that the owner's budget holds.
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for _, sl := range s.slots {
			if sl.live {
				c.evict(s, sl.key)
				s.mu.Unlock()
				return true
			}
		}
		s.mu.Unlock()
	}
	return false
}

// evict removes key from s; s.mu must be held for writing.
func (c *Cache) evict(s *shard, key string) {
	c.unlink(s, key, s.items[key])
	c.evictions.Add(1)
}

// unlink removes key, found at it, from s; s.mu must be held for writing.
func (c *Cache) unlink(s *shard, key string, it item) {
	delete(s.items, key)
	s.slots[it.pos] = slot{}
	s.referenced(it.pos) // clear the bit for the position's next user
	s.free = append(s.free, it.pos)
	c.bytes.Add(-Size(key, it.value))
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
