package cache

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Bounds of the background retries of a write that some peers did not
// confirm: at most retryAttempts attempts, the first retryFirst after the
// write, each delay doubled, with up to 25% jitter so that nodes do not
// retry in step, and none starting later than retryFor after the write.
// Each attempt tells each peer within PeerPolicy.SlowAfter. Between
// attempts a retry is a timer, not a goroutine.
// At most maxRetries keys are retried at a time per group, so that an
// outage during a flood of writes does not multiply them without bound:
// past it, a write is reported but not retried.
const (
	retryAttempts = 6
	retryFirst    = 250 * time.Millisecond
	retryFor      = 30 * time.Second
	maxRetries    = 1024
)

// retries are a group's writes that some peers have not confirmed, by key,
// and the number of the newest write of each key in flight, so that a
// newer write of a key supersedes the retries of older ones: it tells
// every node itself. The zero value is ready to use.
type retries struct {
	mu     sync.Mutex
	seq    uint64
	newest map[string]uint64 // until that write ends
	retry  map[string]*retry
}

// A retry is one write that some peers have not confirmed.
type retry struct {
	w         *write
	ctx       context.Context // the caller's values, without its end
	ownerAddr string          // of the owner peer, "" if this node owns the key
	pending   map[string]bool // the peers that have not confirmed, by address
	attempts  int
	until     time.Time

	// Guarded by retries.mu.
	timer   *time.Timer
	cancel  context.CancelFunc // of the attempt running
	stopped bool
}

// begin records a write of key starting, stops the retries of older
// writes of it, and returns the write's number for end.
func (s *retries) begin(key string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	if s.newest == nil {
		s.newest, s.retry = map[string]uint64{}, map[string]*retry{}
	}
	s.newest[key] = s.seq
	if r := s.retry[key]; r != nil {
		r.stopLocked()
		delete(s.retry, key)
	}
	return s.seq
}

// end records the write seq of w.key ending with the peers in failed not
// confirming, and retries them in the background, with ctx's values but
// not its end, unless a newer write of the key has begun meanwhile. A
// retry is a Remove, whatever w was: a Set's value sent late could land
// over a newer Set of the key (from another node, which this one knows
// nothing of), while dropping the key only costs a load from the source.
func (s *retries) end(ctx context.Context, w *write, seq uint64, failed map[string]error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.newest[w.key] != seq {
		return // superseded
	}
	delete(s.newest, w.key)
	g, key := w.g, w.key
	w = &write{g: g, key: key, owner: w.owner, apply: func(ctx context.Context, p Peer, _ bool) error {
		return peerRemove(ctx, p, g.name, key)
	}}
	r := &retry{w: w, ctx: context.WithoutCancel(ctx), pending: map[string]bool{}, until: time.Now().Add(retryFor)}
	if w.owner != nil {
		r.ownerAddr = w.owner.Addr()
	}
	for a, err := range failed {
		if !errors.Is(err, errors.ErrUnsupported) { // the transport cannot change keys: no retry can help
			r.pending[a] = true
		}
	}
	if len(r.pending) == 0 {
		return
	}
	if len(s.retry) >= maxRetries {
		g.warn.Log(ctx, slog.LevelWarn, "write not retried", "geecache: too many writes retried already; this one is not",
			slog.String("group", g.name), slog.String("key", key), slog.Int("retried", len(s.retry)))
		return
	}
	s.retry[w.key] = r
	r.timer = time.AfterFunc(retryDelay(1), func() { s.run(r) })
}

// stopLocked stops r: no further attempt, and the one running is
// cancelled.
func (r *retry) stopLocked() {
	r.stopped = true
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.cancel != nil {
		r.cancel()
	}
}

// retryDelay is the delay before attempt n (1 for the first retry).
func retryDelay(n int) time.Duration { return jitter(retryFirst << (n - 1)) }

// jitter is d plus up to 25% at random, so that the nodes of a cluster do
// not retry in step.
func jitter(d time.Duration) time.Duration { return d + rand.N(d/4+1) }

// run makes one attempt of r, and schedules the next one if some peers
// have still not confirmed and the bounds allow; else it forgets r, and
// logs the peers it gave up on.
func (s *retries) run(r *retry) {
	s.mu.Lock()
	if r.stopped {
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.cancel = cancel
	s.mu.Unlock()
	r.attempt(ctx)
	cancel()

	s.mu.Lock()
	defer s.mu.Unlock()
	r.cancel = nil
	if r.stopped {
		return
	}
	done := len(r.pending) == 0
	next := retryDelay(r.attempts + 1)
	if !done && r.attempts < retryAttempts && !time.Now().Add(next).After(r.until) {
		r.timer = time.AfterFunc(next, func() { s.run(r) })
		return
	}
	delete(s.retry, r.w.key)
	if done {
		return
	}
	addrs := slices.Sorted(maps.Keys(r.pending))
	r.w.g.warn.Log(r.ctx, slog.LevelWarn, "write unconfirmed", "geecache: peers did not confirm a write; no more retries",
		slog.String("group", r.w.g.name), slog.String("key", r.w.key), slog.Any("peers", addrs), slog.Int("attempts", r.attempts))
}

// attempt tells the peers that have not confirmed (and, if the owner
// confirms now, every other node again), and notes who confirmed. Peers
// are looked up afresh by address: one that has left the ring is no
// longer told.
func (r *retry) attempt(ctx context.Context) {
	r.attempts++
	w := r.w
	list := w.g.peerList()
	if list == nil && w.owner != nil {
		list = []Peer{w.owner} // a picker that cannot list its peers: the owner is all it knows
	}
	cur := make(map[string]Peer, len(list))
	for _, p := range list {
		cur[p.Addr()] = p
	}
	maps.DeleteFunc(r.pending, func(a string, _ bool) bool { return cur[a] == nil }) // they left the ring
	var owner Peer
	if r.pending[r.ownerAddr] {
		owner = cur[r.ownerAddr]
	}
	others := make([]Peer, 0, len(cur))
	for a, p := range cur {
		if a != r.ownerAddr {
			others = append(others, p)
		}
	}
	for a, err := range w.pass(ctx, owner, others, r.pending, false) {
		switch {
		case err == nil || (a != r.ownerAddr && errors.Is(err, errors.ErrUnsupported)):
			delete(r.pending, a)
		default:
			r.pending[a] = true
		}
	}
}
