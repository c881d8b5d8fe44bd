// Package singleflight suppresses duplicate loads: callers that ask for a
// key while a load of it is in flight wait for that load instead of
// starting their own.
//
// Unlike golang/groupcache's, every caller waits on its own context: one
// that gives up leaves without cancelling the load for the others. The load
// runs in its own goroutine with a context that keeps the first caller's
// values but not its cancellation, and is cancelled only once every caller
// has left. A load that panics returns ErrPanic to every caller, and the
// key is free for the next load.
package singleflight

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
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

// Group runs at most one load per key at a time. The zero value is ready.
type Group[V any] struct {
	mu      sync.Mutex
	calls   map[string]*call[V] // loads that callers can still join
	joins   int64               // callers that waited for a load another caller started
	running int                 // loads whose goroutine has not returned, abandoned ones too
}

type call[V any] struct {
	done    chan struct{}
	val     V
	err     error
	waiters int // callers still waiting; guarded by Group.mu
	cancel  context.CancelFunc
}

// Do returns the result of fn for key, starting fn unless a load of key is
// already in flight, in which case it waits for that one.
// If ctx ends first, Do returns ctx's error at once.
func (g *Group[V]) Do(ctx context.Context, key string, fn func(context.Context) (V, error)) (V, error) {
	if err := ctx.Err(); err != nil {
		var zero V
		return zero, err // gone already: start nothing
	}
	g.mu.Lock()
	if g.calls == nil {
		g.calls = make(map[string]*call[V])
	}
	c, joined := g.calls[key]
	if joined {
		c.waiters++
		g.joins++
	} else {
		loadCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &call[V]{done: make(chan struct{}), waiters: 1, cancel: cancel}
		g.calls[key] = c
		g.running++
		go g.run(loadCtx, key, c, fn)
	}
	g.mu.Unlock()

	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
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
			c.cancel()
			g.forget(key, c)
		}
		g.mu.Unlock()
		var zero V
		return zero, ctx.Err()
	}
}

func (g *Group[V]) run(ctx context.Context, key string, c *call[V], fn func(context.Context) (V, error)) {
	returned := false
	defer func() {
		if !returned {
			// fn panicked, or called runtime.Goexit (as t.FailNow does):
			// either way it produced no value, and must not look like one.
			if r := recover(); r != nil {
				c.err = &PanicError{Value: r, Stack: debug.Stack()}
			} else {
				c.err = fmt.Errorf("%w: the load exited its goroutine (runtime.Goexit)", ErrPanic)
			}
		}
		g.mu.Lock()
		g.forget(key, c)
		g.running--
		g.mu.Unlock()
		c.cancel()
		close(c.done)
	}()
	c.val, c.err = fn(ctx)
	returned = true
}

// forget removes c from the calls that callers can join, unless a newer
// load of key has taken its place. g.mu must be held.
func (g *Group[V]) forget(key string, c *call[V]) {
	if g.calls[key] == c {
		delete(g.calls, key)
	}
}

// Joins returns how many callers have waited for a load that another
// caller started.
func (g *Group[V]) Joins() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.joins
}

// InFlight returns the number of loads running now, including abandoned
// ones that have not yet returned.
func (g *Group[V]) InFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running
}
