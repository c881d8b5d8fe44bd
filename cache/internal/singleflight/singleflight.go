// Package singleflight suppresses duplicate loads: callers that ask for a
// key while a load of it is in flight wait for that load instead of
// starting their own.
//
// Unlike golang/groupcache's, every caller waits on its own context: one
// that gives up leaves without cancelling the load for the others. The load
// runs detached from any single caller, with a context that keeps the first
// caller's values but not its cancellation, and is cancelled only once every
// caller has left. A load that panics returns ErrPanic to every caller, and
// the key is free for the next load.
//
// Every load runs on a worker (a goroutine that runs loads one after
// another and ends after a short idle time), never on a caller's: so a load
// that calls runtime.Goexit, as t.FailNow does, ends a worker and gives its
// callers an ErrPanic error instead of ending a caller's goroutine.
package singleflight

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// ErrPanic is wrapped by the error that callers get when a load panicked.
var ErrPanic = errors.New("load panicked")

// PanicError is the error a panicking load returns; it keeps the panic's
// value and stack for logging.
type PanicError struct {
	Value any
	Stack []byte
}

// Error describes the panic's value.
func (e *PanicError) Error() string { return fmt.Sprintf("%v: %v", ErrPanic, e.Value) }

// Unwrap makes errors.Is(err, ErrPanic) true.
func (e *PanicError) Unwrap() error { return ErrPanic }

// Group runs at most one load per key at a time, of values of type V; A
// is the type of the argument a caller passes to its Loader (DoLoader).
// The zero value is ready.
type Group[V, A any] struct {
	mu      sync.Mutex
	calls   map[string]*call[V, A] // loads that callers can still join
	joins   int64                  // callers that waited for a load another caller started
	running int                    // loads whose fn has not returned, abandoned ones too

	// The workers waiting for a load (workers.go), and the timer that ends
	// those that waited too long.
	idle    []parked[V, A]
	tick    uint64 // rounds of the reaper
	reaping bool   // reaper is set to run
	reaper  *time.Timer

	// NewPanic, if set, makes the error of a load that panicked with
	// value (stack: the panicking goroutine's), so that a package can
	// give its callers its own exported type; else it is a *PanicError.
	NewPanic func(value any, stack []byte) error
}

type call[V, A any] struct {
	// done is closed when val and err are set: the load has ended, or
	// published its result early (Publish).
	done      chan struct{}
	val       V
	err       error
	group     *Group[V, A]
	key       string
	waiters   int32       // callers still waiting; guarded by Group.mu
	published bool        // val and err are set; guarded by Group.mu
	grace     *time.Timer // cancels the load a grace after Publish; guarded by Group.mu
	ctx       loadContext // the load's context, in the record: one allocation for both
}

// A Loader loads the value of a key, given the argument its caller passed
// to DoLoader, and f, the handle of its load (to Publish through).
// DoLoader takes one instead of a closure when the load needs state: a
// pointer-shaped Loader (a pointer to an existing struct) goes into the
// interface without an allocation, and the argument, of the Group's type
// A, travels by value in the load's task record, where a closure that
// captures its state costs an allocation per call (as would an argument
// boxed in an interface, unless pointer-shaped).
type Loader[V, A any] interface {
	Load(ctx context.Context, key string, arg A, f Flight[V, A]) (V, error)
}

// funcLoader is a function as a Loader.
type funcLoader[V, A any] func(context.Context) (V, error)

func (fn funcLoader[V, A]) Load(ctx context.Context, _ string, _ A, _ Flight[V, A]) (V, error) {
	return fn(ctx)
}

// A Flight is the handle of one load, which its Loader is given: through
// it, and only through it, the load publishes its answer early (Publish).
// It is one pointer, passed without an allocation. The zero Flight is no
// load's: it publishes nothing.
type Flight[V, A any] struct{ c *call[V, A] }

// Do returns the result of fn for key, starting fn unless a load of key is
// already in flight, in which case it waits for that one.
// If ctx ends first, Do returns ctx's error at once.
//
// fn runs on a worker goroutine, with a context that keeps ctx's values but
// not its cancellation; a panic or runtime.Goexit in it is an ErrPanic
// error for every caller (a Goexit ends that worker).
func (g *Group[V, A]) Do(ctx context.Context, key string, fn func(context.Context) (V, error)) (V, error) {
	var none A
	return g.DoLoader(ctx, key, funcLoader[V, A](fn), none)
}

// DoLoader is Do with l.Load(ctx, key, arg, f) as the load, f its Flight.
// (A caller that joins a load in flight gets its result; its l and arg
// are not used.)
func (g *Group[V, A]) DoLoader(ctx context.Context, key string, l Loader[V, A], arg A) (V, error) {
	if err := ctx.Err(); err != nil {
		var zero V
		return zero, err // gone already: start nothing
	}
	g.mu.Lock()
	if g.calls == nil {
		g.calls = make(map[string]*call[V, A])
	}
	if c, joined := g.calls[key]; joined {
		g.join(c)
		g.mu.Unlock()
		return g.wait(ctx, key, c)
	}
	g.running++
	c := &call[V, A]{waiters: 1, done: make(chan struct{}), group: g, key: key}
	c.ctx.first = ctx
	g.calls[key] = c
	tasks := g.takeIdle()
	g.mu.Unlock()
	g.detach(tasks, task[V, A]{key: key, c: c, l: l, arg: arg})
	return g.wait(ctx, key, c)
}

// join adds a caller to c's waiters; g.mu is held. A claimed record gets
// its done channel here, with its first joiner (see claimLocked): its
// closer reads done under g.mu after settle, and no caller joins a
// settled record (settle forgets it).
func (g *Group[V, A]) join(c *call[V, A]) {
	c.waiters++
	g.joins++
	if c.done == nil {
		c.done = make(chan struct{})
	}
}

// wait waits for c's load or for ctx to end, whichever comes first.
func (g *Group[V, A]) wait(ctx context.Context, key string, c *call[V, A]) (V, error) {
	cancelled := ctx.Done()
	if cancelled == nil {
		// ctx cannot end: only the load ends the wait, and a receive costs
		// less than a select (BenchmarkDo/background/serial: 1.31 s of CPU
		// per million against 1.44, the medians of five runs each).
		<-c.done
		return c.val, c.err
	}
	select {
	case <-c.done:
		return c.val, c.err
	case <-cancelled:
		select {
		case <-c.done: // both ready: the value wins
			return c.val, c.err
		default:
		}
		g.mu.Lock()
		c.waiters--
		if c.waiters == 0 {
			// Nobody wants this load any more: cancel it, and let the
			// next caller start a fresh one instead of joining a load
			// that will end with this caller's cancellation.
			c.ctx.cancel()
			g.forget(key, c)
		}
		g.mu.Unlock()
		var zero V
		return zero, ctx.Err()
	}
}

// run calls l.Load and publishes its result to c's waiters. It runs on a
// worker.
func (g *Group[V, A]) run(ctx context.Context, key string, c *call[V, A], l Loader[V, A], arg A) {
	returned := false
	var val V
	var err error
	defer func() {
		if !returned {
			// fn panicked, or called runtime.Goexit (as t.FailNow does):
			// either way it produced no value, and must not look like one.
			if r := recover(); r != nil {
				if g.NewPanic != nil {
					err = g.NewPanic(r, debug.Stack())
				} else {
					err = &PanicError{Value: r, Stack: debug.Stack()}
				}
			} else {
				err = fmt.Errorf("%w: the load exited its goroutine (runtime.Goexit)", ErrPanic)
			}
		}
		g.mu.Lock()
		g.running--
		first := g.settle(c, val, err)
		grace := c.grace
		c.grace = nil
		g.mu.Unlock()
		c.end(grace)
		if first {
			close(c.done) // no caller can join once c is forgotten
		}
	}()
	val, err = l.Load(ctx, key, arg, Flight[V, A]{c})
	returned = true
}

// settle sets c's result and forgets c, unless it was published already;
// it reports whether it set it. g.mu must be held.
func (g *Group[V, A]) settle(c *call[V, A], val V, err error) bool {
	if c.published {
		return false
	}
	c.published = true
	c.val, c.err = val, err
	g.forget(c.key, c)
	return true
}

// Publish gives the callers of f's load val and err at once, as if the
// load had returned them, and lets callers that come later start a load of
// their own. The load itself goes on, for at most grace more (then its
// context is cancelled); what it returns is dropped. Publish reports
// whether it published: false if the load has already ended or published,
// or f is the zero Flight.
//
// A load that races another way of getting its value (a cache's hedge)
// publishes the first answer without ending the slower one.
func (f Flight[V, A]) Publish(val V, err error, grace time.Duration) bool {
	c := f.c
	if c == nil {
		return false
	}
	g := c.group
	g.mu.Lock()
	first := g.settle(c, val, err)
	done := c.done
	if first {
		c.grace = time.AfterFunc(grace, c.ctx.cancel)
	}
	g.mu.Unlock()
	if !first {
		return false
	}
	if done != nil { // nil: a claim nobody joined
		close(done)
	}
	return true
}

// end cancels the context of c's load, which has ended, and stops grace,
// the timer of a Publish (taken from c under Group.mu), which would
// otherwise keep c, value and all, alive until it fired.
func (c *call[V, A]) end(grace *time.Timer) {
	if grace != nil {
		grace.Stop()
	}
	c.ctx.cancel()
}

// forget removes c from the calls that callers can join, unless a newer
// load of key has taken its place. g.mu must be held.
func (g *Group[V, A]) forget(key string, c *call[V, A]) {
	if g.calls[key] == c {
		delete(g.calls, key)
	}
}

// Forget makes the load of key in flight, if any, one that no new caller
// joins: the next caller starts a load of its own. Callers already waiting
// still get the old load's result. A cache calls it when a key is removed
// or replaced, so that nobody new receives a value loaded before that.
func (g *Group[V, A]) Forget(key string) {
	g.mu.Lock()
	delete(g.calls, key)
	g.mu.Unlock()
}

// Joins returns how many callers have waited for a load that another
// caller started.
func (g *Group[V, A]) Joins() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.joins
}

// InFlight returns the number of loads running now, including abandoned
// ones that have not yet returned.
func (g *Group[V, A]) InFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running
}
