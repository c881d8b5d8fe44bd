package cache

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/cache/internal/singleflight"
	"github.com/geecache/geecache/getter"
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
	p99 := percentile99(l.samples[:min(l.n, latencySamples)])
	l.mu.Unlock()
	l.delay.Store(int64(min(max(p99, l.min), l.max)))
}

// percentile99 returns the 99th percentile of window (at most 200
// samples, unsorted): the sample at index len*99/100 of the sorted window,
// which for so few samples is the largest or the second largest, found in
// one pass without sorting or copying the window.
func percentile99(window []time.Duration) time.Duration {
	const _ uint = 200 - latencySamples // the window must stay within 200 samples
	first, second := time.Duration(math.MinInt64), time.Duration(math.MinInt64)
	for _, d := range window {
		switch {
		case d > first:
			first, second = d, first
		case d > second:
			second = d
		}
	}
	if len(window)-1-len(window)*99/100 == 0 {
		return first
	}
	return second
}

// A hedgeTimer starts the hedge of a fetch (fetchHedged's of one key, or
// a GetMany's batch) when the owner is silent: it has neither answered nor
// said it is loading (PeerReply.Loading) within the hedge delay, or within
// HedgeMax since it last said so. A hedge is for an owner that does not
// answer, not for a slow source: an owner that keeps saying it is loading
// is waited for, one load per key in the cluster.
type hedgeTimer struct {
	g     *Group
	lat   *latencies
	keys  int    // the keys the hedge loads, each counted in Hedges
	start hedger // runs the hedge, on the timer's goroutine
	begin time.Time
	timer *time.Timer
	state atomic.Int32
	seen  atomic.Bool // the owner showed it is alive: its latency is recorded
}

type hedger interface{ hedge() }

// The states of a hedgeTimer.
const (
	waiting int32 = iota // the fetch runs, the hedge has not started
	hedging              // the hedge has started
	fetched              // the fetch ended first: no hedge
)

// arm starts the wait for the owner, before the request is sent.
func (t *hedgeTimer) arm(g *Group, lat *latencies, keys int, start hedger) {
	t.g, t.lat, t.keys, t.start, t.begin = g, lat, keys, start, time.Now()
	t.timer = time.AfterFunc(time.Duration(lat.delay.Load()), t.fire)
}

// fire starts the hedge, unless the fetch ended first.
func (t *hedgeTimer) fire() {
	if t.state.CompareAndSwap(waiting, hedging) {
		t.g.counters.hedges.Add(int64(t.keys))
		t.start.hedge()
	}
}

// alive records that the owner is alive (it said it is loading, or
// answered): the first time, the fetch's latency; and while no hedge has
// started, the owner gets HedgeMax from now before one does.
func (t *hedgeTimer) alive() {
	if t.seen.CompareAndSwap(false, true) {
		t.lat.record(time.Since(t.begin))
	}
	if t.state.Load() == waiting {
		t.timer.Reset(t.g.policy.HedgeMax)
	}
}

// end ends the wait (answered: the owner answered, so it is alive) and
// reports whether the hedge started first: it then runs to its end.
func (t *hedgeTimer) end(answered bool) (hedged bool) {
	if t.state.CompareAndSwap(waiting, fetched) {
		t.timer.Stop()
	}
	if answered {
		t.alive()
	}
	return t.state.Load() == hedging
}

// A hedge is the local load a slow fetch started beside it.
type hedge struct {
	done      chan struct{}
	e         entry
	err       error
	published atomic.Bool // its answer went to the callers first (see fetch.hedge)
}

// found reports whether err is a peer's answer (a value or "not found")
// rather than a failure.
func found(err error) bool { return err == nil || errors.Is(err, getter.ErrNotFound) }

// fetchHedged fetches key from owner (admitted through ph, which may be
// nil) and settles the fetch's health. If the owner is silent (see
// hedgeTimer), a local load starts beside the fetch (through the local
// flight, so still one local load per key), and whichever answers first
// goes to the callers. A local "not found" is as final as the owner's: the
// owner asks the same source. local is not nil when the local load
// decided: local.e and local.err are then the result (local.err is ctx's
// error if the callers left first), and err is the fetch's (not nil: the
// owner failed, before or after the hedge answered). ttl is the lifetime
// the owner gave its answer, if its transport says.
//
// The fetch runs on the caller's goroutine (the flight's worker) with
// ctx, the load's context, and the hedge on the timer's: a fetch that
// answers within the hedge delay costs no goroutine and no context of its
// own. A hedge that answers first publishes its answer to the callers of
// flight, the load's, at once (Flight.Publish); the fetch goes on until
// SlowAfter since it began, so that a slow peer that answers counts as
// alive and only one that does not counts as failed.
func (g *Group) fetchHedged(ctx context.Context, owner Peer, key string, gen uint64, ph *peerHealth, probe bool, flight singleflight.Flight[entry, loadArg]) (v []byte, ttl time.Duration, local *hedge, err error) {
	if g.policy.NoHedge {
		v, ttl, err = peerGet(ctx, owner, OpGet, g.name, key)
		g.settle(ctx, ph, probe, err, ctx.Err() != nil)
		return v, ttl, nil, err
	}
	f := &fetch{oneKey: oneKey{keys: [1]string{key}}, ctx: ctx, gen: gen, flight: flight, h: hedge{done: make(chan struct{})}}
	f.t.arm(g, g.latency, 1, f)
	v, ttl, err = f.get(ctx, owner, OpGet, g.name, f)
	hedged := f.t.end(found(err))
	published := hedged && f.h.published.Load()
	g.settle(ctx, ph, probe, err, !published && ctx.Err() != nil)
	switch {
	case !hedged, found(err) && !published:
		return v, ttl, nil, err
	case published:
		<-f.h.done               // closed right after the publish
		return nil, 0, &f.h, err // err: the owner failed after all (it hung past SlowAfter)
	}
	// The owner failed: the local load decides.
	select {
	case <-f.h.done:
		return nil, 0, &f.h, err
	case <-ctx.Done():
		return nil, 0, &hedge{err: ctx.Err()}, err
	}
}

// A fetch is a hedged fetch's state, shared with its hedge timer: one
// allocation, where closures would cost one each.
type fetch struct {
	oneKey                                     // the request, and its reply (but for Loading)
	t      hedgeTimer                          // hears the owner's signs that it is loading
	ctx    context.Context                     // the load's
	gen    uint64                              // the load's (see memory.gens): the hedge's copy keeps to it
	flight singleflight.Flight[entry, loadArg] // the load's, to publish the hedge's answer through
	h      hedge
}

// Loading is the owner's sign that it is loading the key.
func (f *fetch) Loading() { f.t.alive() }

// hedge loads the key locally, beside the fetch, and if the local load
// answers (a value or "not found") publishes its answer to the callers,
// leaving the fetch until SlowAfter since it began.
func (f *fetch) hedge() {
	g := f.t.g
	f.h.e, f.h.err = g.loadCopy(f.ctx, f.keys[0], f.gen)
	if found(f.h.err) && f.flight.Publish(f.h.e, f.h.err, max(g.policy.SlowAfter-time.Since(f.t.begin), 0)) {
		f.h.published.Store(true)
		if f.h.err == nil {
			g.counters.hedgeLocalWins.Add(1)
		}
	}
	close(f.h.done)
}

// settle ends a fetch from ph's peer (nil: the peer's health is not
// tracked; probe: the fetch is the peer's probe): it logs a Peer's
// panic with its stack, frees the fetch's in-flight slot and records its
// outcome. A fetch the callers abandoned
// says nothing of the peer.
func (g *Group) settle(ctx context.Context, ph *peerHealth, probe bool, err error, abandoned bool) {
	if err != nil {
		var pe *PanicError // declared here: it escapes, so a fetch without an error does not allocate it
		if errors.As(err, &pe) {
			g.warn.Log(ctx, slog.LevelError, "peer panic", "geecache: Peer panicked, loading locally", slog.String("group", g.name),
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
		g.warn.Log(ctx, slog.LevelWarn, "eject "+ph.addr, "geecache: peer ejected, loading its keys elsewhere",
			slog.String("group", g.name), slog.String("peer", ph.addr), slog.Any("err", err))
	}
}
