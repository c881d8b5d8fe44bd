// Package lru is the byte-counted memory behind a cache group: a sharded
// hash table that readers search without a lock, and an eviction policy in
// the manner of W-TinyLFU that writers run under one mutex.
//
// A hit takes no lock and writes nothing shared but a per-shard hit
// counter and the entry's small use counter, which it stops writing once
// the counter saturates: readers walk an open-addressing table of atomic
// pointers to immutable entries, so hits on a hot key do not bounce a
// lock's cache line between cores the way a read lock, or moving the key
// to the front of a list, would.
//
// The policy (see policy.go) keeps entries in two queues in insertion
// order: a small window that every new entry joins, and the main queue, a
// CLOCK that gives each used entry a second chance. An entry leaving the
// window enters the main queue only if a frequency sketch says it is used
// more often than the entry the main queue would evict for it; so a scan
// or a loop of keys used once cannot flush the keys used often.
package lru

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/geecache/geecache/internal/valuesum"
)

const (
	shardBits  = 4 // 16 tables: each grows on its own, in smaller steps
	shardCount = 1 << shardBits
	minSlots   = 8
)

// Cache is a concurrency-safe map from string keys to immutable byte
// values, each with an expiry time, that keeps count of the bytes it holds.
// It has no capacity of its own: the owner decides when to call EvictOne.
type Cache struct {
	seed     maphash.Seed
	shards   [shardCount]shard
	overhead int64 // charged per entry on top of key and value
	// Sums makes Add keep the xxhash64 of each value of at least
	// valuesum.Min bytes, for Sum. Set it before the first Add.
	Sums      bool
	bytes     atomic.Int64
	items     atomic.Int64
	evictions atomic.Int64

	mu     sync.Mutex // serialises writers; readers never take it
	policy policy
}

type shard struct {
	// table is read on every Get: it shares its cache line with nothing
	// that a Get writes, so the line stays in every core's cache.
	table atomic.Pointer[table]
	_     [56]byte
	hits  atomic.Int64 // written on every hit: a line of its own
	_     [56]byte
	live  int // entries in the table; c.mu
	used  int // live entries plus tombstones; c.mu
}

// A table is an open-addressing hash table with linear probing. Slots hold
// nil (never used), tomb (deleted) or a live entry. At least a quarter of
// the slots are nil, so every probe ends.
type table struct {
	slots []atomic.Pointer[entry]
	mask  uint64
	tomb  *entry
}

// An entry's key, value and expiry never change once it is published;
// a new value for its key is a new entry. Readers also touch uses. At 64
// bytes it fills one size class of the allocator, so a Get reads one
// cache line of it: the value is kept as its pointer and length (its
// capacity is never used) so that its checksum fits as well.
type entry struct {
	hash    uint64
	key     string
	data    *byte // the value: unsafe.Slice(data, size)
	size    int
	sum     uint64 // the value's xxhash64 if the cache keeps sums and it is at least valuesum.Min bytes, else 0
	expires int64  // Unix nanoseconds; 0 is never
	uses    atomic.Uint32
	node    int32 // its node in the policy; Cache.mu
}

// value returns the entry's value.
func (e *entry) value() []byte { return unsafe.Slice(e.data, e.size) }

// use counts a use of e. Load before Store, and stop at maxUses: a hot
// key's entry is written a few times per pass of the policy, not on every
// hit. A use lost to a concurrent hit does not matter.
func (e *entry) use() {
	if u := e.uses.Load(); u < maxUses {
		e.uses.Store(u + 1)
	}
}

func newTable(slots int) *table {
	return &table{slots: make([]atomic.Pointer[entry], slots), mask: uint64(slots - 1), tomb: new(entry)}
}

// New returns an empty Cache. With countOverhead, every entry is charged
// EntryOverhead bytes on top of its key and value, so that Bytes follows
// the memory the cache really holds.
func New(countOverhead bool) *Cache {
	c := &Cache{seed: maphash.MakeSeed()}
	if countOverhead {
		c.overhead = EntryOverhead
	}
	for i := range c.shards {
		c.shards[i].table.Store(newTable(minSlots))
	}
	c.policy.init(c.overhead)
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

// find returns the entry of key (hash h), or nil. A lookup that took a
// table before a rehash published its successor sees the old table's
// snapshot, which no later change reaches: it looks again in the table
// that is current once it has looked, so that it never returns an entry
// removed before it began, nor misses one added before it began.
func (s *shard) find(h uint64, key string) *entry {
	for {
		t := s.table.Load()
		e := t.find(h, key)
		if s.table.Load() == t {
			return e
		}
	}
}

// Get returns the value of key and its expiry (Unix nanoseconds, 0 for
// never), and counts a use of it. It returns an entry whether or not it
// has expired: the caller compares the expiry with its own clock, and may
// still serve a stale value.
func (c *Cache) Get(key string) (value []byte, expires int64, ok bool) {
	s, h := c.locate(key)
	e := s.find(h, key)
	if e == nil {
		return nil, 0, false
	}
	e.use()
	s.hits.Add(1)
	return e.value(), e.expires, true
}

// Unhit takes back the hit that a Get of key counted, for a caller that
// found the entry unusable (expired), so that Hits counts only the Gets a
// cache answered.
func (c *Cache) Unhit(key string) {
	s, _ := c.locate(key)
	s.hits.Add(-1)
}

// Peek is Get without counting a use or a hit.
func (c *Cache) Peek(key string) (value []byte, expires int64, ok bool) {
	s, h := c.locate(key)
	if e := s.find(h, key); e != nil {
		return e.value(), e.expires, true
	}
	return nil, 0, false
}

// Add stores value under key with an expiry (Unix nanoseconds, 0 for
// never), replacing any earlier value. The byte count changes by exactly
// the difference, so replacing never drifts it.
func (c *Cache) Add(key string, value []byte, expires int64) {
	s, h := c.locate(key)
	ne := &entry{hash: h, key: key, data: unsafe.SliceData(value), size: len(value), expires: expires}
	if c.Sums && len(value) >= valuesum.Min {
		ne.sum = xxhash.Sum64(value) // before the lock: a large value takes a while
	}
	c.mu.Lock()
	defer c.mu.Unlock()
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
			ne.uses.Store(e.uses.Load())
			c.policy.replace(e, ne)
			t.slots[i].Store(ne)
			c.bytes.Add(int64(len(value) - e.size))
			return
		}
	}
	t.slots[insert].Store(ne)
	s.live++
	c.bytes.Add(c.Charge(key, value))
	c.items.Add(1)
	c.policy.added(ne, c.items.Load())
	if s.used*4 >= len(t.slots)*3 {
		s.rehash(t)
	}
}

// Use counts one use of key, as a Get does, without counting a hit. The
// policy's hand passes an entry used since its last pass, so an entry just
// added and used once is not the next victim: for a key this node took over
// with its value, which its previous owner used, but which has not been asked
// here yet. A key not held is left alone.
func (c *Cache) Use(key string) {
	s, h := c.locate(key)
	if e := s.find(h, key); e != nil {
		e.use()
	}
}

// Credit counts n uses of key in the frequency sketch that decides which
// entries stay (see policy.go), whether or not key is held: for a key whose
// demand the cache has not seen itself, such as one whose owner left and
// whose uses were counted on another node.
func (c *Cache) Credit(key string, n uint32) {
	_, h := c.locate(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.policy.sketch.add(h, n)
}

// rehash publishes a new table sized for the live entries, without
// tombstones. Readers still walking the old one see a consistent, if
// slightly stale, snapshot. c.mu must be held.
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
	s.used = s.live
}

// Remove deletes key and reports whether it was present.
func (c *Cache) Remove(key string) bool {
	_, h := c.locate(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unlink(h, key)
}

// unlink removes the entry of key (hash h) from its table and the policy,
// and reports whether there was one; c.mu must be held.
func (c *Cache) unlink(h uint64, key string) bool {
	s := &c.shards[h>>(64-shardBits)]
	t := s.table.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return false
		}
		if e.hash == h && e != t.tomb && e.key == key {
			t.slots[i].Store(t.tomb)
			s.live--
			c.bytes.Add(-c.Charge(e.key, e.value()))
			c.items.Add(-1)
			c.policy.removed(e)
			return true
		}
	}
}

// EvictOne removes one entry and reports whether the cache had one to
// evict. It takes an entry that expired at or before now (Unix
// nanoseconds; 0 disables this) if there is one, else the one the policy
// values least.
func (c *Cache) EvictOne(now int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evict(c.policy.victim(now, c.bytes.Load()))
}

// EvictExpired removes the entry that expired first, if one expired at
// or before now (Unix nanoseconds), and reports whether it removed one.
func (c *Cache) EvictExpired(now int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evict(c.policy.expired(now))
}

// evict removes e, if not nil, as an eviction; c.mu must be held.
func (c *Cache) evict(e *entry) bool {
	if e == nil {
		return false
	}
	c.unlink(e.hash, e.key)
	c.evictions.Add(1)
	return true
}

// Charge is the number of bytes an entry of key and value is charged: its
// key and value, plus EntryOverhead if the cache counts overhead.
func (c *Cache) Charge(key string, value []byte) int64 {
	return int64(len(key)+len(value)) + c.overhead
}

// Bytes returns the bytes charged for the entries held.
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

// Sum returns the xxhash64 the cache keeps for key's value, if value is
// that value (the same bytes in memory) and the cache keeps one (Sums, a
// value of at least valuesum.Min bytes); else 0.
func (c *Cache) Sum(key string, value []byte) uint64 {
	if len(value) == 0 {
		return 0
	}
	s, h := c.locate(key)
	e := s.find(h, key)
	if e == nil || e.size != len(value) || e.data != &value[0] {
		return 0
	}
	return e.sum
}
