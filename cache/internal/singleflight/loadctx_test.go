package singleflight

import (
	"context"
	"errors"
	"github.com/geecache/geecache/internal/testkit"
	"runtime"
	"testing"
)

// TestLoadContextOfDetachedLoad follows the context of a load that runs in
// a goroutine of its own: it keeps the first caller's values, is not
// cancelled (nor has a cause) while a caller still waits although the first
// has left, propagates its cancellation to derived contexts without a
// goroutine of theirs, and runs AfterFuncs that were not stopped.
func TestLoadContextOfDetachedLoad(t *testing.T) {
	type ctxKey struct{}
	var g Group[string, struct{}]
	first, leave := context.WithCancelCause(context.WithValue(t.Context(), ctxKey{}, "trace-1"))
	errFirstLeft := errors.New("the first caller left")
	loadCtx := make(chan context.Context, 1)
	release := make(chan struct{})
	type seen struct {
		value      any
		err, cause error
	}
	whileRunning := make(chan seen, 1)
	loadEnded := make(chan struct{})
	go func() {
		_, _ = g.Do(first, "k", func(ctx context.Context) (string, error) {
			loadCtx <- ctx
			<-release
			whileRunning <- seen{ctx.Value(ctxKey{}), ctx.Err(), context.Cause(ctx)}
			<-ctx.Done()
			close(loadEnded)
			return "", ctx.Err()
		})
	}()
	ctx := <-loadCtx
	if _, ok := ctx.(*loadContext); !ok {
		t.Fatalf("the load's context is a %T", ctx)
	}
	// Contexts derived from it are registered with it, not watched by a
	// goroutine each (as the context package does for a parent it does
	// not know).
	before := runtime.NumGoroutine()
	var children [10]context.Context
	for i := range children {
		var cancel context.CancelFunc
		children[i], cancel = context.WithCancel(ctx)
		defer cancel()
	}
	child := children[0]
	if n := runtime.NumGoroutine() - before; n >= len(children) {
		t.Fatalf("%d derived contexts started %d goroutines; want them registered with the load's context", len(children), n)
	}
	ran := make(chan string, 2)
	context.AfterFunc(ctx, func() { ran <- "kept" })
	stop := context.AfterFunc(ctx, func() { ran <- "stopped" })
	if !stop() {
		t.Fatal("stop of an AfterFunc that had not run reported false")
	}

	stayer, stay := context.WithCancel(t.Context())
	stayerErr := make(chan error, 1)
	go func() {
		_, err := g.Do(stayer, "k", nil) // joins: its fn is never called
		stayerErr <- err
	}()
	testkit.WaitFor(t, "the second caller", func() bool { return g.waiters("k") == 2 })
	leave(errFirstLeft) // the first caller goes; one still waits
	testkit.WaitFor(t, "the first caller to leave", func() bool { return g.waiters("k") == 1 })
	close(release)
	s := <-whileRunning
	if s.value != "trace-1" || s.err != nil || s.cause != nil {
		t.Fatalf("while a caller waits: value %v, err %v, cause %v; want trace-1, nil, nil", s.value, s.err, s.cause)
	}

	stay() // the last caller goes: the load is cancelled
	if err := <-stayerErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("second caller: %v", err)
	}
	<-loadEnded
	<-child.Done()
	if cause := context.Cause(ctx); cause != context.Canceled || !errors.Is(child.Err(), context.Canceled) {
		t.Fatalf("after all left: cause %v, child %v", context.Cause(ctx), child.Err())
	}
	if got := <-ran; got != "kept" {
		t.Fatalf("AfterFunc %q ran", got)
	}
	testkit.WaitFor(t, "the load to end", func() bool { return g.InFlight() == 0 })
	select {
	case got := <-ran:
		t.Fatalf("AfterFunc %q ran after it was stopped", got)
	default:
	}
	// Registered after the cancellation: runs at once.
	context.AfterFunc(ctx, func() { ran <- "late" })
	if got := <-ran; got != "late" {
		t.Fatalf("AfterFunc %q ran", got)
	}
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("the load's context has a deadline")
	}
}
