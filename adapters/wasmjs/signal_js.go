//go:build js && wasm

package wasmjs

import (
	"context"
	"sync"
	"syscall/js"
	"time"
)

// signalContext is a context.Context that ends when a JavaScript
// AbortSignal aborts. It watches the signal only once Done or Err is
// first called: a request answered from memory never asks, and so costs
// no listener.
type signalContext struct {
	signal  js.Value // an AbortSignal, or undefined
	signals js.Value // in a batch: the array of signals whose index-th is this one's, or undefined
	index   int

	mu      sync.Mutex
	done    chan struct{} // nil until first asked
	err     error
	onAbort js.Func
	watched bool // onAbort is registered
}

func newSignalContext(signal, signals js.Value, index int) *signalContext {
	return &signalContext{signal: signal, signals: signals, index: index}
}

func (c *signalContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *signalContext) Value(any) any               { return nil }

// Done returns a channel closed when the signal aborts.
func (c *signalContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.signal.IsUndefined() && c.signals.Type() == js.TypeObject { // a batch's: looked up only now
		if s := c.signals.Index(c.index); s.Type() == js.TypeObject && s.Get("addEventListener").Type() == js.TypeFunction {
			c.signal = s
		}
	}
	if c.signal.IsUndefined() {
		return c.done
	}
	if c.signal.Get("aborted").Bool() {
		c.cancelLocked()
		return c.done
	}
	c.onAbort = js.FuncOf(func(js.Value, []js.Value) any {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.cancelLocked()
		return nil
	})
	c.signal.Call("addEventListener", "abort", c.onAbort)
	c.watched = true
	return c.done
}

// Err returns context.Canceled once the signal has aborted.
func (c *signalContext) Err() error {
	c.Done()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *signalContext) cancelLocked() {
	if c.err == nil {
		c.err = context.Canceled
		close(c.done)
	}
}

// release stops watching the signal.
func (c *signalContext) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watched {
		c.signal.Call("removeEventListener", "abort", c.onAbort)
		c.onAbort.Release()
		c.watched = false
	}
}

// String names the context in panics and logs.
func (c *signalContext) String() string { return "wasmjs.signalContext" }
