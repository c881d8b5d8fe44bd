// Package ratelog bounds how often a kind of warning is logged: one line
// per kind per interval, each saying how many of its kind were left out
// since the last one. A peer outage or a flood of bad requests then costs
// a line a second, not a line a request.
package ratelog

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A Limiter decides which warnings of each kind are logged. It is safe for
// concurrent use; the zero value is not usable (use New).
type Limiter struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu    sync.Mutex
	kinds map[string]*kindState
}

type kindState struct {
	last       time.Time
	suppressed int64
}

// maxKinds bounds the kinds a Limiter remembers; past it, the oldest are
// forgotten, so that kinds made from peers' addresses cannot grow it
// without bound.
const maxKinds = 1024

// New returns a Limiter that writes to log at most one line per kind per
// every. now may be nil for time.Now.
func New(log *slog.Logger, every time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{log: log, every: every, now: now, kinds: make(map[string]*kindState)}
}

// Log writes msg with attrs at level, unless a line of the same kind was
// written less than the interval ago; then it only counts it. A line that
// is written says, as the attribute "suppressed", how many of its kind were
// left out before it.
func (l *Limiter) Log(ctx context.Context, level slog.Level, kind, msg string, attrs ...slog.Attr) {
	if !l.log.Enabled(ctx, level) {
		return
	}
	now := l.now()
	l.mu.Lock()
	st, ok := l.kinds[kind]
	if !ok {
		if len(l.kinds) >= maxKinds {
			l.forgetOldest()
		}
		st = &kindState{}
		l.kinds[kind] = st
	} else if now.Sub(st.last) < l.every {
		st.suppressed++
		l.mu.Unlock()
		return
	}
	suppressed := st.suppressed
	st.last, st.suppressed = now, 0
	l.mu.Unlock()
	if suppressed > 0 {
		attrs = append(attrs, slog.Int64("suppressed", suppressed))
	}
	l.log.LogAttrs(ctx, level, msg, attrs...)
}

// forgetOldest drops the kind logged longest ago. l.mu must be held.
func (l *Limiter) forgetOldest() {
	var oldest string
	var t time.Time
	for k, st := range l.kinds {
		if oldest == "" || st.last.Before(t) {
			oldest, t = k, st.last
		}
	}
	delete(l.kinds, oldest)
}
