package cache

import "context"

// progressKey is the context key of a progress callback.
type progressKey struct{}

// WithProgress returns a context that carries f, to be called by Progress.
// It carries one sign of life across a hop: a binding that serves a peer's
// request passes it to Group.GetLocal, so that it can tell the asking node
// "loading" (the net/http binding sends a 102 Processing response), and a
// Group passes one to its PeerGetter, so that a peer that says it is
// loading is waited for instead of hedged. f must be safe to call from any
// goroutine, more than once.
func WithProgress(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// Progress calls the callback of WithProgress in ctx, if any: the work the
// caller waits for is under way. A Group calls it when a Get has to wait
// for a load, on the Get's goroutine; a PeerGetter calls it when its peer
// shows it is answering (it said it is loading, or its answer has begun to
// arrive).
func Progress(ctx context.Context) {
	if f, ok := ctx.Value(progressKey{}).(func()); ok {
		f()
	}
}
