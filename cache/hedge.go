package cache

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/progress"
)

// latencies keeps how long recent fetches took to show the owner alive
// (its answer, or its word that it is loading) and the hedge delay made
// from them: their 99th percentile within the policy's bounds.
type latencies struct {
	min, max time.Duration
	delay    atomic.Int64 // nanoseconds; initialHedgeDelay until enough samples

	mu      sync.Mutex
	samples [latencySamples]time.Duration
	n       int // samples recorded, all time
}

const (
	latencySamples = 128 // the window the percentile is taken over
	latencyEvery   = 8   // recompute after this many new samples

	// initialHedgeDelay is the hedge delay before any fetch was seen
	// (within HedgeMin and HedgeMax). An owner that is alive sends its
	// answer, or says it is loading, long before it on any network a
	// cluster runs on; one that has not in this time is not well.
	initialHedgeDelay = 100 * time.Millisecond
)

func newLatencies(p PeerPolicy) *latencies {
	l := &latencies{min: p.HedgeMin, max: p.HedgeMax}
	l.delay.Store(int64(min(max(initialHedgeDelay, p.HedgeMin), p.HedgeMax)))
	return l
}

// record adds the time a fetch took to show its owner alive.
func (l *latencies) record(d time.Duration) {
	l.mu.Lock()
	l.samples[l.n%latencySamples] = d
	l.n++
	if l.n%latencyEvery != 0 {
		l.mu.Unlock()
		return
	}
	window := slices.Clone(l.samples[:min(l.n, latencySamples)])
	l.mu.Unlock()
	slices.Sort(window)
	p99 := window[len(window)*99/100]
	l.delay.Store(int64(min(max(p99, l.min), l.max)))
}

// hedgeDelay returns how long to wait for the owner before hedging.
func (l *latencies) hedgeDelay() time.Duration { return time.Duration(l.delay.Load()) }

// A hedge is the local load a slow fetch started beside it.
type hedge struct {
	done chan struct{}
	e    entry
	err  error
}

// peerResult is what a fetch from a peer gave.
type peerResult struct {
	v   []byte
	ttl time.Duration
	err error
}

// found reports whether err is a peer's answer (a value or "not found")
// rather than a failure.
func found(err error) bool { return err == nil || errors.Is(err, getter.ErrNotFound) }

// fetchHedged fetches key from owner (admitted through ph, which may be
// nil) and settles the fetch's health. A hedge is for an owner that does
// not answer, not for a source that is slow: if the owner neither answers
// nor says it is loading (see internal/progress) within the hedge delay, it starts
// a local load beside the fetch (through the local flight, so still one
// local load per key) and returns whichever answers first; an owner that
// said it is loading is waited for, up to HedgeMax. A local "not found" is as final as the
// owner's: the owner asks the same source. local is not nil when the local
// load decided: local.e and local.err are then the result (local.err is
// ctx's error if the callers left first). ttl is the lifetime the owner
// gave its answer, if its transport says.
//
// A fetch that a hedge beat is not cut short: it goes on, detached from
// the callers, until SlowAfter since it began, so that a slow peer that
// answers counts as alive and only one that does not counts as failed.
func (g *Group) fetchHedged(ctx context.Context, owner PeerGetter, key string, ph *peerHealth, probe bool) (v []byte, ttl time.Duration, local *hedge, err error) {
	if g.policy.NoHedge {
		v, ttl, err = peerGet(ctx, owner, g.name, key)
		g.settle(ctx, ph, probe, err, ctx.Err() != nil)
		return v, ttl, nil, err
	}
	f := &fetch{g: g, begin: time.Now(), res: make(chan peerResult, 1), alive: make(chan struct{})}
	// The fetch's own context: ctx's values, cancelled when the callers
	// leave before the hedge has won (each select below that sees ctx end
	// calls cancel), or after SlowAfter once it has.
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go f.run(progress.With(fctx, f.showAlive), cancel, ctx, owner, key, ph, probe)
	timer := g.timer(g.latency.hedgeDelay())
	defer g.putTimer(timer)
	select {
	case r := <-f.res:
		return r.v, r.ttl, nil, r.err
	case <-ctx.Done():
		cancel()
		return nil, 0, nil, ctx.Err()
	case <-f.alive:
		// The owner is loading: wait for it rather than load a second
		// time, up to HedgeMax in all, in case it stopped since it said so.
		timer.Reset(max(g.policy.HedgeMax-time.Since(f.begin), 0))
		select {
		case r := <-f.res:
			return r.v, r.ttl, nil, r.err
		case <-ctx.Done():
			cancel()
			return nil, 0, nil, ctx.Err()
		case <-timer.C:
		}
	case <-timer.C:
	}
	g.counters.hedges.Add(1)
	h := &hedge{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		h.e, h.err = g.localFlight.DoLoader(ctx, key, (*hedgeLoader)(g), nil)
	}()
	select {
	case r := <-f.res:
		if found(r.err) {
			return r.v, r.ttl, nil, r.err
		}
		return g.awaitHedge(ctx, h, r.err) // the owner failed: the local load decides
	case <-h.done:
		if !found(h.err) { // the local load failed: the owner decides
			select {
			case r := <-f.res:
				if found(r.err) {
					return r.v, r.ttl, nil, r.err
				}
				return nil, 0, h, r.err
			case <-ctx.Done():
				cancel()
				return nil, 0, &hedge{err: ctx.Err()}, ctx.Err()
			}
		}
		f.won.Store(true)
		// The owner's last chance to show it is alive.
		time.AfterFunc(max(g.policy.SlowAfter-time.Since(f.begin), 0), cancel)
		return nil, 0, h, nil
	case <-ctx.Done():
		cancel()
		return nil, 0, &hedge{err: ctx.Err()}, ctx.Err()
	}
}

// timer returns a stopped timer of the group's pool, started for d. A
// hedged fetch needs one for its hedge delay, and nearly always stops it
// unfired; pooled, it costs no allocation.
func (g *Group) timer(d time.Duration) *time.Timer {
	if t, ok := g.timers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// putTimer stops t and returns it to the pool. Since Go 1.23 a stopped
// timer's channel holds no stale tick, so the next Reset starts afresh.
func (g *Group) putTimer(t *time.Timer) {
	t.Stop()
	g.timers.Put(t)
}

// A fetch is what a hedged fetch's goroutine shares with the caller that
// waits for it: one allocation for the state, where closures would cost one
// each.
type fetch struct {
	g     *Group
	begin time.Time
	res   chan peerResult // the answer, once
	alive chan struct{}   // closed when the owner shows it is alive
	seen  atomic.Bool     // alive is closed, or the fetch has ended
	won   atomic.Bool     // the hedge answered first
}

// showAlive records that the owner is alive (it said it is loading, or
// answered), once: the fetch's latency, and alive closed.
func (f *fetch) showAlive() {
	if f.seen.CompareAndSwap(false, true) {
		f.g.latency.record(time.Since(f.begin))
		close(f.alive)
	}
}

// run fetches key from owner with fctx and sends the answer; cancel ends
// fctx. ctx is the callers' context, which says whether they left.
func (f *fetch) run(fctx context.Context, cancel context.CancelFunc, ctx context.Context, owner PeerGetter, key string, ph *peerHealth, probe bool) {
	defer cancel()
	v, ttl, err := peerGet(fctx, owner, f.g.name, key)
	if found(err) {
		f.showAlive()
	}
	f.g.settle(ctx, ph, probe, err, !f.won.Load() && ctx.Err() != nil)
	f.res <- peerResult{v, ttl, err}
}

// awaitHedge waits for the local load h after the owner failed with err.
func (g *Group) awaitHedge(ctx context.Context, h *hedge, err error) ([]byte, time.Duration, *hedge, error) {
	select {
	case <-h.done:
		return nil, 0, h, err
	case <-ctx.Done():
		return nil, 0, &hedge{err: ctx.Err()}, err
	}
}

// settle ends a fetch from ph's peer (nil: the peer's health is not
// tracked; probe: the fetch is the peer's probe): it logs a PeerGetter's
// panic with its stack, frees the fetch's in-flight slot and records its
// outcome. A fetch the callers abandoned
// says nothing of the peer.
func (g *Group) settle(ctx context.Context, ph *peerHealth, probe bool, err error, abandoned bool) {
	if err != nil {
		var pe *PanicError // declared here: it escapes, so a fetch without an error does not allocate it
		if errors.As(err, &pe) {
			g.warn.Log(ctx, slog.LevelError, "peer panic", "geecache: PeerGetter panicked, loading locally", slog.String("group", g.name),
				slog.Any("panic", pe.Value), slog.String("stack", string(pe.Stack)))
		}
	}
	if ph == nil {
		return
	}
	ph.inFlight.Add(-1)
	outcome := outcomeFailure
	switch {
	case found(err):
		outcome = outcomeSuccess
	case abandoned:
		outcome = outcomeNone
	}
	if g.health.done(ph, outcome, probe) {
		g.warn.Log(ctx, slog.LevelWarn, "eject "+ph.addr, "geecache: peer ejected, loading its keys locally",
			slog.String("group", g.name), slog.String("peer", ph.addr), slog.Any("err", err))
	}
}
