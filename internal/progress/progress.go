// Package progress carries one sign of life across a hop between nodes:
// "the work you wait for is under way". It is the link between the core's
// hedging and the transports of this module; an application never needs
// it.
//
// A binding that serves a peer's request passes a context from With to
// Group.GetLocal, so that it can tell the asking node "loading" (the
// net/http binding sends a 102 Processing response), and a Group passes
// one to its Peer, so that a peer that says it is loading is waited
// for instead of hedged.
package progress

import "context"

// key is the context key of a progress Listener.
type key struct{}

// A Listener hears the sign of life: Report calls its Progress method,
// which must be safe to call from any goroutine, more than once. It is an
// interface, not a func, so that a caller passes the pointer it already
// has (a method value would be one more allocation per request).
type Listener interface{ Progress() }

// Func is a func as a Listener, for a caller that has no pointer to pass.
type Func func()

// Progress calls f.
func (f Func) Progress() { f() }

// With returns a context that carries l, to be called by Report.
func With(ctx context.Context, l Listener) context.Context {
	return context.WithValue(ctx, key{}, l)
}

// Wanted reports whether ctx carries a Listener of With: a transport
// that must do work to hear a peer's "loading" (the net/http client
// installs an httptrace) does it only when someone listens.
func Wanted(ctx context.Context) bool {
	_, ok := ctx.Value(key{}).(Listener)
	return ok
}

// Report calls the Listener of With in ctx, if any: the work the caller
// waits for is under way. A Group calls it when a Get has to wait for a
// load, on the Get's goroutine; a Peer calls it when its peer shows
// it is answering (it said it is loading, or its answer has begun to
// arrive).
func Report(ctx context.Context) {
	if l, ok := ctx.Value(key{}).(Listener); ok {
		l.Progress()
	}
}
