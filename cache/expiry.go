package cache

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/geecache/geecache/getter"
)

// entry is a loaded value and its expiry (Unix nanoseconds; 0: never).
type entry struct {
	v   []byte
	exp int64
}

// freshness is what a group knows of time: its TTLs, its clock, and the
// refreshes of stale keys in flight.
type freshness struct {
	ttl, notFoundTTL, stale time.Duration
	// expires: entries may expire (a TTL is set, the Getter or the peers
	// give lifetimes, or a Set or Restore gave one), so that an add
	// evicts expired entries first. It only ever turns on.
	expires atomic.Bool

	coarse coarseClock // the clock: time.Now to a millisecond

	// negative marks a cached "not found": its own allocation, so that no
	// value can share its address.
	negative []byte

	refreshing   sync.Map      // keys whose stale value is being refreshed
	refreshSlots chan struct{} // the refreshes running (maxRefreshes)
}

// init sets f up for a group of options o and Getter g.
func (f *freshness) init(o *GroupOptions, g getter.Getter) {
	_, ttlGetter := g.(getter.TTLGetter)
	f.ttl, f.notFoundTTL, f.stale = min(o.TTL, maxTTL), min(o.NotFoundTTL, maxTTL), min(o.StaleWhileRevalidate, maxTTL)
	f.negative = make([]byte, 0, 1)
	f.refreshSlots = make(chan struct{}, maxRefreshes)
	f.expires.Store(o.TTL > 0 || o.NotFoundTTL > 0 || ttlGetter || o.Peers != nil)
}

// expiring records that an entry with an expiry is stored.
func (f *freshness) expiring(exp int64) {
	if exp != 0 && !f.expires.Load() {
		f.expires.Store(true)
	}
}

// nanos returns the time now, in Unix nanoseconds, from the coarse clock,
// which a hit can read without a system call.
func (f *freshness) nanos() int64 { return f.coarse.nanos() }

// isFresh reports whether an entry expiring at exp may be served as fresh.
func (f *freshness) isFresh(exp int64) bool { return exp == 0 || exp > f.nanos() }

// isNotFound reports whether v is the marker of a cached "not found". Its
// address is enough: the cache keeps a value's pointer and length, not its
// capacity, and no other empty slice points into the marker's allocation.
func (f *freshness) isNotFound(v []byte) bool {
	return len(v) == 0 && unsafe.SliceData(v) == unsafe.SliceData(f.negative)
}

// cached turns a cached value into a load's result.
func (f *freshness) cached(v []byte, exp int64) (entry, error) {
	if f.isNotFound(v) {
		return entry{exp: exp}, getter.ErrNotFound
	}
	return entry{v, exp}, nil
}

// remaining is the lifetime left to an entry expiring at exp, as sent to
// peers: 0 for none, and at least a millisecond for one served stale.
func (f *freshness) remaining(exp int64) time.Duration {
	if exp == 0 {
		return 0
	}
	return max(time.Duration(exp-f.nanos()), time.Millisecond)
}

// maxTTL bounds every lifetime, so that adding one to the time cannot
// overflow: a century is "forever" for a cache.
const maxTTL = 100 * 365 * 24 * time.Hour

// expiry returns the expiry of a value kept now for ttl (0: never), and
// the time now if it was read (0 if not: a group without lifetimes never
// reads the clock).
func (f *freshness) expiry(ttl time.Duration) (exp, now int64) {
	if ttl <= 0 {
		if f.expires.Load() {
			now = f.nanos() // so that expired entries go first at eviction
		}
		return 0, now
	}
	now = f.nanos()
	return now + int64(min(ttl, maxTTL)), now
}

// refreshTimeout bounds a background refresh of a stale value.
const refreshTimeout = time.Minute

// refreshBackoff is the least time between two refreshes of a key while its
// source fails; up to a quarter more is added at random, so that the nodes
// of a cluster do not retry in step. A source that is down is asked about a
// key once a second per node, not once per stale Get.
const refreshBackoff = time.Second

// maxRefreshes is how many background refreshes a group runs at once: a
// GetMany of many stale keys (or many Gets) does not start a load per key
// at once. A stale key past the bound is served stale, and refreshed by a
// later Get.
const maxRefreshes = 32

// refresh reloads key in the background, unless a refresh of it is running
// or failed less than refreshBackoff ago, or maxRefreshes are running. A
// refresh that fails leaves the
// stale value to be served until its window ends; one that finds the key
// gone ("not found" is the source's answer, not an outage) ends the stale
// value at once.
func (g *Group) refresh(key string, mayForward bool) {
	if _, busy := g.fresh.refreshing.LoadOrStore(key, struct{}{}); busy {
		return
	}
	select {
	case g.fresh.refreshSlots <- struct{}{}:
	default:
		g.fresh.refreshing.Delete(key)
		return
	}
	g.counters.refreshes.Add(1)
	go func() {
		defer func() { <-g.fresh.refreshSlots }()
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		_, err := g.load(ctx, key, mayForward, nil) // not a Get: not counted as a miss
		switch {
		case err == nil:
			g.fresh.refreshing.Delete(key)
		case errors.Is(err, getter.ErrNotFound):
			// The source says the key is gone: its stale value must not be
			// served any longer. (A "not found" the load cached, or a value
			// set since, is fresh and stays.)
			g.mem.removeExpired(key, g.fresh.nanos())
			g.fresh.refreshing.Delete(key)
		default:
			g.counters.refreshFailures.Add(1)
			g.warn.Log(ctx, slog.LevelWarn, "refresh", "geecache: refresh failed, serving the stale value",
				slog.String("group", g.name), slog.Any("err", err))
			// The key stays marked until the backoff ends: no refresh of it
			// before then.
			time.AfterFunc(jitter(refreshBackoff), func() { g.fresh.refreshing.Delete(key) })
		}
	}()
}

// coarseTick is the resolution of the coarse clock.
const coarseTick = time.Millisecond

// A coarseClock is the time, to a millisecond, in an atomic: a hit on an
// entry that expires reads it instead of calling time.Now. It ticks only
// while it is read, so an idle group costs nothing and holds no goroutine.
type coarseClock struct {
	t       atomic.Int64
	running atomic.Bool
	used    atomic.Bool
}

func (c *coarseClock) nanos() int64 {
	if c.used.Load() { // read since the last tick: the clock runs and t is current
		return c.t.Load()
	}
	return c.restart()
}

// restart serves the first read since the last tick, or ever: the clock
// may have stopped long ago, so the time is read afresh, and stored before
// used says that t is current. It is apart from nanos so that nanos, the
// hit path's, inlines.
//
//go:noinline
func (c *coarseClock) restart() int64 {
	now := time.Now().UnixNano()
	c.t.Store(now)
	c.used.Store(true)
	if c.running.CompareAndSwap(false, true) {
		time.AfterFunc(coarseTick, c.tick)
	}
	return now
}

// tick moves the clock on, and keeps ticking while it was read since the
// last tick. A reader that marks it used just after it stops starts it
// again.
func (c *coarseClock) tick() {
	c.t.Store(time.Now().UnixNano())
	if c.used.Swap(false) {
		time.AfterFunc(coarseTick, c.tick)
		return
	}
	c.running.Store(false)
	if c.used.Load() && c.running.CompareAndSwap(false, true) {
		time.AfterFunc(coarseTick, c.tick) // a reader came in between
	}
}
