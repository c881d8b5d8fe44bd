package cache

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/cache/internal/lru"
)

// hotShareDivisor bounds the hot cache: while it holds more than
// 1/hotShareDivisor of the main cache's bytes, it is evicted from first.
const hotShareDivisor = 8

// memory holds a group's two caches under one byte budget: main for the
// keys this node owns and loaded itself, hot for copies of keys other nodes
// own, fetched from them or loaded by a hedge beside a slow fetch (so a
// popular remote key does not cross the network every time).
type memory struct {
	maxBytes int64
	main     *lru.Cache
	hot      *lru.Cache
	writeMu  sync.Mutex // serialises adds so that the budget holds exactly

	// gens count the writes (removals and replacements) of the keys that
	// hash to each stripe. They order a write against a load, by one rule
	// that every load follows, whatever it loads from (the Getter, the
	// owner, a previous owner, a next node):
	//
	//   - A load notes its key's generation before it last looks for the
	//     key in memory (look), and keeps its value only if the generation
	//     is the same when it stores it, and no fresh entry of the key came
	//     meanwhile (add, under writeMu).
	//   - A write changes the entries first and bumps the generation after,
	//     under writeMu.
	//
	// So a load that missed before a write and ends after it keeps
	// nothing, however it got its value; and a load that noted the
	// generation after a write finds the write's value in memory (a Set's),
	// or loads after the write (a Remove's), so that what it keeps is not
	// older than the write. The write also makes the group's flights forget
	// the key, so that no caller that comes after it joins a load from
	// before it. Another key of the stripe changing only costs a load its
	// caching, never a wrong value.
	seed maphash.Seed
	gens [genStripes]atomic.Uint64

	// wrote is when each stripe was last written (Unix nanoseconds). A
	// write reaches the key's owner before the other nodes, so for a while
	// after it another node's memory may still hold the value it
	// replaced: a load must not take the key from another node's memory
	// then (handoff, pull), however new its generation.
	wrote [genStripes]atomic.Int64
}

const genStripes = 256

// newMemory returns a memory of maxBytes. With countOverhead, each entry
// is charged lru.EntryOverhead bytes on top of its key and value.
func newMemory(maxBytes int64, countOverhead bool) *memory {
	m := &memory{maxBytes: maxBytes, main: lru.New(countOverhead), hot: lru.New(countOverhead), seed: maphash.MakeSeed()}
	// main's values are the ones this node serves to its peers: their
	// checksums are computed once, here, not at every serve. hot's are
	// served by their owners.
	m.main.Sums = true
	return m
}

// generation returns the generation of key's stripe.
func (m *memory) generation(key string) uint64 {
	return m.gens[maphash.String(m.seed, key)%genStripes].Load()
}

// written marks key's stripe changed, as the last step of a write (see
// gens and wrote). m.writeMu must be held.
func (m *memory) written(key string) {
	s := maphash.String(m.seed, key) % genStripes
	m.wrote[s].Store(time.Now().UnixNano())
	m.gens[s].Add(1)
}

// wroteWithin reports whether key's stripe was written within d.
func (m *memory) wroteWithin(key string, d time.Duration) bool {
	return time.Now().UnixNano()-m.wrote[maphash.String(m.seed, key)%genStripes].Load() < int64(d)
}

// look returns key's generation and then, as peek does, its entry: what a
// load starts from (see gens).
func (m *memory) look(key string) (gen uint64, value []byte, expires int64, ok bool) {
	gen = m.generation(key)
	value, expires, ok = m.peek(key)
	return gen, value, expires, ok
}

// get looks key up in main, then hot. expires is the entry's expiry in
// Unix nanoseconds (0: never); get returns expired entries too. An
// expired entry of main's may hide a fresh one of hot's: a caller that
// finds it expired looks again with second.
func (m *memory) get(key string) (value []byte, expires int64, ok bool) {
	// An empty hot cache (as on a node without peers) is not searched.
	if v, exp, ok := m.main.Get(key); ok || m.hot.Len() == 0 {
		return v, exp, ok
	}
	return m.hot.Get(key)
}

// second is get's second look at key, for an entry (*v, *exp) get
// returned expired at now: main's entry of a key can expire while hot
// holds a fresh copy of it (the key changed owners, and this node fetched
// it from the new one). It leaves in *v and *exp, of that entry and hot's,
// the one that expires last, and reports whether it is fresh at now; a
// fresh one of hot's takes over the hit get counted. It is apart from get,
// and called in the condition of a hit (ok && (isFresh || second)), so that
// a hit on a fresh entry takes the same branches as without it.
//
//go:noinline
func (m *memory) second(key string, v *[]byte, exp *int64, now int64) (fresh bool) {
	hv, hexp, ok := m.hot.Peek(key)
	if !ok || !outlives(hexp, *exp) { // (hot's own entry, if main held none, does not outlive itself)
		return false
	}
	*v, *exp = hv, hexp
	if hexp != 0 && hexp <= now {
		return false
	}
	m.main.Unhit(key)
	m.hot.Get(key) // the hit, and the use, are hot's
	return true
}

// outlives reports whether an entry expiring at a stays fresh longer than
// one expiring at b (0: never).
func outlives(a, b int64) bool { return a == 0 || (b != 0 && a > b) }

// peek is get without counting a hit or a use, and without get's blind
// spot: of main's and hot's entries of key, it returns the one that
// expires last.
func (m *memory) peek(key string) (value []byte, expires int64, ok bool) {
	v, exp, ok := m.main.Peek(key)
	if ok && exp == 0 {
		return v, exp, true
	}
	if m.hot.Len() == 0 {
		return v, exp, ok
	}
	if hv, hexp, hok := m.hot.Peek(key); hok && (!ok || outlives(hexp, exp)) {
		return hv, hexp, true
	}
	return v, exp, ok
}

// sum returns the xxhash64 main keeps for key's value, if value is that
// value and main keeps one; else 0.
func (m *memory) sum(key string, value []byte) uint64 { return m.main.Sum(key, value) }

// unhit takes back the hit a get of key counted (the entry was expired).
func (m *memory) unhit(key string) {
	if _, _, ok := m.main.Peek(key); ok {
		m.main.Unhit(key)
		return
	}
	m.hot.Unhit(key)
}

// add stores a load's value in c (m.main or m.hot) with an expiry (Unix
// nanoseconds, 0 for never), unless key's generation is no longer gen (the
// key was removed or replaced since its load began), or c holds a fresh
// entry of key at now (it came after the load looked, so it is not older:
// another load's, or a write's that a lookup missed while it was being
// stored). It evicts first so
// that the two caches together never hold more than maxBytes; entries
// expired at now (0: none is) go first. A value larger than the whole
// budget is not stored, and a budget of 0 stores nothing.
func (m *memory) add(c *lru.Cache, key string, value []byte, gen uint64, expires, now int64) {
	size := c.Charge(key, value)
	if m.maxBytes <= 0 || size > m.maxBytes {
		return
	}
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if m.generation(key) != gen {
		return
	}
	if _, exp, ok := c.Peek(key); ok && (exp == 0 || exp > now && now != 0) {
		return
	}
	m.addLocked(c, key, value, size, expires, now)
}

// addIfRoom is add into main for a restore: it stores the entry only if
// no key of key's stripe was ever removed or replaced here (its
// generation is 0: the snapshot, written before this memory was made,
// cannot know of such a change), main does not hold key, and it fits in
// the budget without evicting anything; it reports whether it did.
func (m *memory) addIfRoom(key string, value []byte, expires int64) bool {
	size := m.main.Charge(key, value)
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if m.generation(key) != 0 || m.main.Bytes()+m.hot.Bytes()+size > m.maxBytes {
		return false
	}
	if _, _, held := m.main.Peek(key); held {
		return false
	}
	m.main.Add(key, value, expires)
	return true
}

// replace makes value key's value in main, at once: it drops both caches'
// entries and makes every load of key in flight unable to keep its value,
// in one step, so that no load can slip in between.
func (m *memory) replace(key string, value []byte, expires, now int64) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if size := m.main.Charge(key, value); m.maxBytes > 0 && size <= m.maxBytes {
		// In place: a lookup meanwhile finds the old value or the new
		// one, never none. One that found none would load the source,
		// whose value may be older than the write this one replaces.
		m.addLocked(m.main, key, value, size, expires, now)
	} else {
		m.main.Remove(key)
	}
	m.hot.Remove(key)
	m.written(key) // after the change (see gens)
}

// addLocked evicts until size more bytes fit, then adds the entry.
// m.writeMu must be held.
func (m *memory) addLocked(c *lru.Cache, key string, value []byte, size, expires, now int64) {
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

// demote moves key's entry, if main holds it, to hot, with its value and
// expiry: a key this node held as its owner and holds as a copy now. It is
// not a change of the key: loads in flight keep their generation. A copy
// in hot that outlives main's entry stays, and main's goes.
func (m *memory) demote(key string, now int64) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	v, exp, ok := m.main.Peek(key)
	if !ok {
		return
	}
	m.main.Remove(key)
	if _, hexp, held := m.hot.Peek(key); held && outlives(hexp, exp) {
		return
	}
	m.addLocked(m.hot, key, v, m.hot.Charge(key, v), exp, now)
}

// promote moves key's entry, if hot holds it fresh at now, to main, with
// its value and expiry, and reports whether it did: a copy of a key this
// node owns now. Like demote, it is not a change of the key.
func (m *memory) promote(key string, now int64) bool {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	v, exp, ok := m.hot.Peek(key)
	if !ok || (exp != 0 && exp <= now) {
		return false
	}
	m.hot.Remove(key)
	m.addLocked(m.main, key, v, m.main.Charge(key, v), exp, now)
	return true
}

// remove drops key from both caches and makes every load of it in flight
// unable to keep its value.
func (m *memory) remove(key string) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	m.main.Remove(key)
	m.hot.Remove(key)
	m.written(key) // after the change (see gens)
}

// removeExpired is remove, if key's entry is still expired at now: a
// write that came meanwhile stays.
func (m *memory) removeExpired(key string, now int64) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if _, exp, ok := m.peek(key); !ok || exp == 0 || exp > now {
		return
	}
	m.main.Remove(key)
	m.hot.Remove(key)
	m.written(key)
}

// purge drops every entry of both caches at once, and makes every load in
// flight unable to keep its value.
func (m *memory) purge() {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	m.main.Clear()
	m.hot.Clear()
	now := time.Now().UnixNano()
	for i := range m.gens { // after the change (see gens)
		m.wrote[i].Store(now)
		m.gens[i].Add(1)
	}
}
