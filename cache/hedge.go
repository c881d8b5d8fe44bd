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

// A hedge is the local load a slow fetch started beside it.
type hedge struct {
	state atomic.Int32 // hedgePending, then hedgeRunning or hedgeCancelled
	done  chan struct{}
	e     entry
	err   error
}

const (
	hedgePending int32 = iota
	hedgeRunning
	hedgeCancelled
)

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
	h := &hedge{done: make(chan struct{})}
	t := time.AfterFunc(g.latency.hedgeDelay(), func() {
		if !h.state.CompareAndSwap(hedgePending, hedgeRunning) {
			return
		}
		defer close(h.done)
		g.counters.hedges.Add(1)
		h.e, h.err = g.localFlight.DoLoader(ctx, key, (*hedgeLoader)(g), nil)
		if h.err == nil {
			cancel() // the owner's answer is no longer needed
		}
	})
	begin := time.Now()
	v, ttl, err = peerGet(pctx, owner, g.name, key)
	t.Stop()
	if h.state.CompareAndSwap(hedgePending, hedgeCancelled) {
		if err == nil {
			g.latency.record(time.Since(begin))
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
