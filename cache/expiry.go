package cache

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/geecache/geecache/cache/internal/lru"
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

	now    func() time.Time // an injected clock, read on every call; nil: coarse
	coarse coarseClock

	// negative marks a cached "not found": its own allocation, so that no
	// value can share its address.
	negative []byte

	refreshing sync.Map // keys whose stale value is being refreshed
}

func newFreshness(o *GroupOptions) freshness {
	return freshness{ttl: o.TTL, notFoundTTL: o.NotFoundTTL, stale: o.StaleWhileRevalidate, now: o.Now, negative: make([]byte, 0, 1)}
}

// nanos returns the time now, in Unix nanoseconds: the injected clock's, or
// the coarse clock's, which a hit can read without a system call.
func (f *freshness) nanos() int64 {
	if f.now != nil {
		return f.now().UnixNano()
	}
	return f.coarse.nanos()
}

// isFresh reports whether an entry expiring at exp may be served as fresh.
func (f *freshness) isFresh(exp int64) bool { return exp == 0 || exp > f.nanos() }

// isNotFound reports whether v is the marker of a cached "not found".
func (f *freshness) isNotFound(v []byte) bool {
	return len(v) == 0 && cap(v) > 0 && unsafe.SliceData(v) == unsafe.SliceData(f.negative)
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

// expiry returns the expiry of a value kept now for ttl (0: never), and
// the time now if it was read (0 if not).
func (f *freshness) expiry(ttl time.Duration) (exp, now int64) {
	if ttl <= 0 {
		return 0, 0
	}
	now = f.nanos()
	return now + int64(ttl), now
}

// keep stores the result of a load in c (main or hot) for ttl, unless key
// changed since gen: a value, or with err (a "not found") the negative
// marker when ttl is positive.
func (g *Group) keep(c *lru.Cache, key string, v []byte, ttl time.Duration, err error, gen uint64) (entry, error) {
	exp, now := g.fresh.expiry(ttl)
	if err != nil {
		if exp != 0 {
			g.mem.add(c, key, g.fresh.negative, gen, exp, now)
		}
		return entry{exp: exp}, err
	}
	g.mem.add(c, key, v, gen, exp, now)
	return entry{v, exp}, nil
}

// get answers a Get whose memory lookup found v expiring at exp (ok), or
// nothing: a fresh value or cached "not found" at once, a stale one at once
// while one refresh runs in the background, anything else by a load.
func (g *Group) get(ctx context.Context, key string, mayForward bool, v []byte, exp int64, ok bool) (entry, error) {
	if ok {
		if exp == 0 {
			return entry{v: v}, nil
		}
		now := g.fresh.nanos()
		if exp > now {
			e, err := g.fresh.cached(v, exp)
			if err != nil {
				err = &Error{Group: g.name, Key: key, Err: err}
			}
			return e, err
		}
		if now < exp+int64(g.fresh.stale) && !g.fresh.isNotFound(v) {
			g.counters.staleServes.Add(1)
			g.refresh(key, mayForward)
			return entry{v, exp}, nil
		}
	}
	return g.load(ctx, key, mayForward)
}

// refreshTimeout bounds a background refresh of a stale value.
const refreshTimeout = time.Minute

// refresh reloads key in the background, unless a refresh of it is running.
// A failed refresh leaves the stale value to be served until its window
// ends.
func (g *Group) refresh(key string, mayForward bool) {
	if _, busy := g.fresh.refreshing.LoadOrStore(key, struct{}{}); busy {
		return
	}
	g.counters.refreshes.Add(1)
	go func() {
		defer g.fresh.refreshing.Delete(key)
		ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
		defer cancel()
		if _, err := g.load(ctx, key, mayForward); err != nil {
			g.counters.refreshFailures.Add(1)
			g.warn.Log(ctx, slog.LevelWarn, "refresh", "geecache: refresh failed, serving the stale value",
				slog.String("group", g.name), slog.Any("err", err))
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
	if !c.used.Load() { // the first read since the last tick (or ever)
		c.used.Store(true)
		if c.running.CompareAndSwap(false, true) {
			c.t.Store(time.Now().UnixNano())
			time.AfterFunc(coarseTick, c.tick)
		}
	}
	return c.t.Load()
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
