package singleflight

import (
	"context"
	"sync"
	"time"
)

// loadContext is the context of a load that runs on a worker goroutine:
// it has the first caller's values, no deadline, and is cancelled when every
// caller has left or the load has ended. It behaves as
// context.WithCancel(context.WithoutCancel(first)) does, and lives inside
// the load's record.
//
// That context (inner) is made only when the load first asks for Done, or
// derives a context: a load that asks only for values allocates nothing
// for its context. Made, it answers Done and Value, so that the context
// package sees a context derived from the load's as a child of a cancelCtx
// of its own and registers it there, without a goroutine or an AfterFunc
// (both cost allocations on every peer request), and Value never passes
// through context.withoutCancelCtx.Value, which allocates on every call.
//
// Why not make that context for every load: then a miss costs 9
// allocations instead of 5, and cache's BenchmarkGetMiss/cancellable ran
// 17-25% slower at the median in two runs of the regression guard
// (bench/cmd/guard -families miss), beyond the noise its hit rows showed.
type loadContext struct {
	first context.Context // the first caller's context: its values only

	mu          sync.Mutex         // a leaf: nothing else is locked while it is held
	inner       context.Context    // WithCancel(WithoutCancel(first)), made at the first need
	cancelInner context.CancelFunc // cancels inner
	err         error              // context.Canceled once cancelled
}

// Deadline reports no deadline: the callers' deadlines are their own.
func (c *loadContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// ctx returns inner, making it (already cancelled if the load is) at the
// first call.
func (c *loadContext) ctx() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner == nil {
		c.inner, c.cancelInner = context.WithCancel(context.WithoutCancel(c.first))
		if c.err != nil {
			c.cancelInner()
		}
	}
	return c.inner
}

// Value returns the first caller's value for key. A key of the context
// package itself (a *int: the key under which context.Cause, and
// WithCancel looking for a parent to register with, find the nearest
// cancelCtx) is asked through inner, so that they find the load's own
// cancellation, not the first caller's (WithoutCancel hides that one).
// Any other key is asked of the first caller's context directly: the same
// answer, without making inner (a load whose Getter or previous-owner check asks
// for a value would otherwise cost the three allocations of
// WithCancel(WithoutCancel(first)) for nothing).
func (c *loadContext) Value(key any) any {
	if _, ok := key.(*int); ok {
		return c.ctx().Value(key)
	}
	return c.first.Value(key)
}

// Done returns a channel that is closed when the load is cancelled.
func (c *loadContext) Done() <-chan struct{} { return c.ctx().Done() }

// Err returns context.Canceled once the load is cancelled, else nil.
func (c *loadContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// String names the context, as the context package's contexts do.
func (c *loadContext) String() string { return "singleflight.loadContext" }

// cancel cancels the load's context; only the first call has an effect.
func (c *loadContext) cancel() {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = context.Canceled
	cancel := c.cancelInner
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
