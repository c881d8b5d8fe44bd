package cache

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// latencies keeps recent successful fetch times and the hedge delay made
// from them: their 99th percentile within the policy's bounds.
type latencies struct {
	min, max time.Duration
	delay    atomic.Int64 // nanoseconds; max until enough samples

	mu      sync.Mutex
	samples [latencySamples]time.Duration
	n       int // samples recorded, all time
}

const (
	latencySamples = 128 // the window the percentile is taken over
	latencyEvery   = 32  // recompute after this many new samples
)

func newLatencies(p PeerPolicy) *latencies {
	l := &latencies{min: p.HedgeMin, max: p.HedgeMax}
	l.delay.Store(int64(p.HedgeMax))
	return l
}

// record adds the time a successful fetch took.
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

// A hedge is the local load a slow fetch may start beside it: its timer
// starts the load (fire) when the fetch has taken the hedge delay. Hedges
// are pooled: one whose timer was stopped before it fired is reused, timer
// and all, so that a fetch faster than the delay (nearly all) allocates
// nothing for its hedge.
type hedge struct {
	g     *Group
	timer *time.Timer  // runs fire; armed once per use
	state atomic.Int32 // hedgePending, then hedgeRunning or hedgeCancelled

	// Set for each use before the timer is armed.
	ctx    context.Context
	key    string
	cancel context.CancelFunc // cancels the fetch

	// Set by fire before state becomes hedgeRunning.
	done chan struct{}
	e    entry
	err  error
}

const (
	hedgePending int32 = iota
	hedgeRunning
	hedgeCancelled
)

// startHedge returns a pending hedge for the fetch of key under ctx
// (cancel cancels the fetch), whose timer fires after delay.
func (g *Group) startHedge(ctx context.Context, key string, cancel context.CancelFunc, delay time.Duration) *hedge {
	h, _ := g.hedges.Get().(*hedge)
	if h == nil {
		h = &hedge{g: g, ctx: ctx, key: key, cancel: cancel}
		h.timer = time.AfterFunc(delay, h.fire)
		return h
	}
	h.ctx, h.key, h.cancel = ctx, key, cancel
	h.state.Store(hedgePending)
	h.timer.Reset(delay)
	return h
}

// fire starts the local load, unless the fetch has ended first.
func (h *hedge) fire() {
	h.done = make(chan struct{}) // read by the fetch only once state is hedgeRunning
	if !h.state.CompareAndSwap(hedgePending, hedgeRunning) {
		return
	}
	defer close(h.done)
	h.g.counters.hedges.Add(1)
	h.e, h.err = h.g.localFlight.DoLoader(h.ctx, h.key, (*hedgeLoader)(h.g), nil)
	if h.err == nil {
		h.cancel() // the owner's answer is no longer needed
	}
}

// release returns a hedge whose timer never fired to the pool.
func (h *hedge) release() {
	h.ctx, h.key, h.cancel = nil, "", nil
	h.g.hedges.Put(h)
}

// fetchHedged fetches key from owner; if the owner has not answered within
// the hedge delay, it starts a local load beside the fetch (through the
// local flight, so still one local load per key) and returns whichever
// succeeds first. local is not nil when the fetch failed after the local
// load started (often cut short by the local load's success): then local.v
// and local.err are the result, or local.err is ctx's error if the caller
// left first. ttl is the lifetime the owner gave the value (or its "not
// found"), if its transport says.
func (g *Group) fetchHedged(ctx context.Context, owner PeerGetter, key string) (v []byte, ttl time.Duration, local *hedge, err error) {
	if g.policy.NoHedge {
		v, ttl, err = peerGet(ctx, owner, g.name, key)
		return v, ttl, nil, err
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := g.startHedge(ctx, key, cancel, g.latency.hedgeDelay())
	begin := time.Now()
	v, ttl, err = peerGet(pctx, owner, g.name, key)
	stopped := h.timer.Stop()
	if h.state.CompareAndSwap(hedgePending, hedgeCancelled) {
		if err == nil {
			g.latency.record(time.Since(begin))
		}
		if stopped { // fire never runs: the hedge is free
			h.release()
		}
		return v, ttl, nil, err
	}
	if err == nil {
		return v, ttl, nil, nil
	}
	select {
	case <-h.done:
		return v, ttl, h, err
	case <-ctx.Done():
		return v, ttl, &hedge{err: ctx.Err()}, err
	}
}
