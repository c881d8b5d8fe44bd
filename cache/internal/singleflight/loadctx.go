package singleflight

import (
	"context"
	"sync"
	"time"
)

// loadContext is the context of a load that runs in a goroutine of its own:
// it has the first caller's values, no deadline, and is cancelled when every
// caller has left or the load has ended. It behaves as
// context.WithCancel(context.WithoutCancel(first)) does, and lives inside
// the load's record, so a load that never asks for Done allocates nothing
// for its context.
//
// It has an AfterFunc method, which the context package uses to propagate
// its cancellation to the contexts derived from it, instead of a goroutine
// per derived context.
type loadContext struct {
	first context.Context // the first caller's context: its values only

	mu     sync.Mutex      // a leaf: nothing else is locked while it is held
	values context.Context // context.WithoutCancel(first), made at the first Value
	done   chan struct{}
	err    error
	after  map[*afterFunc]struct{} // functions to start when cancelled
}

type afterFunc struct{ f func() }

// Deadline reports no deadline: the callers' deadlines are their own.
func (c *loadContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value returns the first caller's value for key. It asks through
// WithoutCancel, so that context.Cause does not find the first caller's
// cancellation: the load's cause is the load's own.
func (c *loadContext) Value(key any) any {
	c.mu.Lock()
	if c.values == nil {
		c.values = context.WithoutCancel(c.first)
	}
	values := c.values
	c.mu.Unlock()
	return values.Value(key)
}

// Done returns a channel that is closed when the load is cancelled.
func (c *loadContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

// Err returns context.Canceled once the load is cancelled, else nil.
func (c *loadContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// String names the context, as the context package's contexts do.
func (c *loadContext) String() string { return "singleflight.loadContext" }

// AfterFunc arranges for f to run in its own goroutine once the load is
// cancelled (at once if it is). stop unregisters f; it reports whether it
// stopped f from being run.
func (c *loadContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	if c.after == nil {
		c.after = make(map[*afterFunc]struct{})
	}
	c.after[a] = struct{}{}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.after[a]
		delete(c.after, a)
		return ok
	}
}

// cancel cancels the load's context; only the first call has an effect.
func (c *loadContext) cancel() {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = context.Canceled
	if c.done != nil {
		close(c.done)
	}
	after := c.after
	c.after = nil
	c.mu.Unlock()
	for a := range after {
		go a.f()
	}
}
