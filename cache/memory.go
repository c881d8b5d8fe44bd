package cache

import (
	"sync"

	"github.com/geecache/geecache/cache/internal/lru"
)

// hotShareDivisor bounds the hot cache: while it holds more than
// 1/hotShareDivisor of the main cache's bytes, it is evicted from first.
const hotShareDivisor = 8

// memory holds a group's two caches under one byte budget: main for the
// keys this node owns and loaded itself, hot for keys fetched from their
// owners (so a popular remote key does not cross the network every time).
type memory struct {
	maxBytes int64
	main     *lru.Cache
	hot      *lru.Cache
	writeMu  sync.Mutex // serialises adds so that the budget holds exactly
}

// newMemory returns a memory of maxBytes. With countOverhead, each entry
// is charged lru.EntryOverhead bytes on top of its key and value.
func newMemory(maxBytes int64, countOverhead bool) *memory {
	return &memory{maxBytes: maxBytes, main: lru.New(countOverhead), hot: lru.New(countOverhead)}
}

// get looks key up in main, then hot. expires is the entry's expiry in
// Unix nanoseconds (0: never); get returns expired entries too.
func (m *memory) get(key string) (value []byte, expires int64, ok bool) {
	if v, exp, ok := m.main.Get(key); ok {
		return v, exp, true
	}
	return m.hot.Get(key)
}

// peek is get without counting a hit or a use.
func (m *memory) peek(key string) (value []byte, expires int64, ok bool) {
	if v, exp, ok := m.main.Peek(key); ok {
		return v, exp, true
	}
	return m.hot.Peek(key)
}

// add stores value in c (m.main or m.hot) with an expiry (Unix
// nanoseconds, 0 for never), evicting first so that the two caches
// together never hold more than maxBytes; entries expired at now (0: none
// is) go first. A value larger than the whole budget is not stored, and a
// budget of 0 or less stores nothing.
func (m *memory) add(c *lru.Cache, key string, value []byte, expires, now int64) {
	size := c.Charge(key, value)
	if m.maxBytes <= 0 || size > m.maxBytes {
		return
	}
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	// Evicting for the full size even when key is already present may free
	// a little more than needed; it never lets the total pass the budget.
	for m.main.Bytes()+m.hot.Bytes()+size > m.maxBytes {
		if now != 0 && (m.main.EvictExpired(now) || m.hot.EvictExpired(now)) {
			continue
		}
		if !m.victim().EvictOne(now) {
			break
		}
	}
	c.Add(key, value, expires)
}

// victim is the cache to evict from: hot while it is over its share.
func (m *memory) victim() *lru.Cache {
	if m.hot.Len() > 0 && (m.hot.Bytes() > m.main.Bytes()/hotShareDivisor || m.main.Len() == 0) {
		return m.hot
	}
	return m.main
}

func (m *memory) remove(key string) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	m.main.Remove(key)
	m.hot.Remove(key)
}
