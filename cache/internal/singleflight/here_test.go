package singleflight

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/geecache/geecache/internal/testkit"
)

// The tests in this file are about DoLoaderHere: a load whose first caller
// cannot leave runs on that caller's goroutine.

// doHere is DoLoaderHere with a function as the Loader.
func (g *Group[V]) doHere(ctx context.Context, key string, fn func(context.Context) (V, error)) (V, error) {
	return g.DoLoaderHere(ctx, key, funcLoader[V](fn), nil)
}

// A caller that cannot leave runs the load itself, with its own context;
// one that can leave hands it to a worker, as DoLoader does.
func TestDoLoaderHereRunsOnTheCallersGoroutine(t *testing.T) {
	var g Group[string]
	self := goroutineID()
	type ctxKey struct{}
	bg := context.WithValue(context.Background(), ctxKey{}, "mine")
	var gotCtx context.Context
	on, err := g.doHere(bg, "a", func(ctx context.Context) (string, error) {
		gotCtx = ctx
		return goroutineID(), nil
	})
	if err != nil || on != self || gotCtx != bg {
		t.Fatalf("uncancellable caller: load ran on %q (caller %q), ctx %v, err %v; want the caller's goroutine and context", on, self, gotCtx, err)
	}
	on, err = g.doHere(t.Context(), "b", func(context.Context) (string, error) { return goroutineID(), nil })
	if err != nil || on == "" || on == self {
		t.Fatalf("cancellable caller: load ran on %q (caller %q), err %v; want a worker", on, self, err)
	}
	if g.InFlight() != 0 {
		t.Fatalf("InFlight = %d after both loads", g.InFlight())
	}
}

// A load run by its caller is shared as any other: a caller that joins it
// gets its value, and one that joins and leaves does not end it.
func TestDoLoaderHereIsJoined(t *testing.T) {
	var g Group[string]
	release := make(chan struct{})
	var loads int
	fn := func(ctx context.Context) (string, error) {
		loads++ // one load only: no race
		<-release
		return "v", ctx.Err()
	}
	leader := make(chan string, 1)
	go func() {
		v, err := g.doHere(context.Background(), "k", fn)
		if err != nil {
			v = err.Error()
		}
		leader <- v
	}()
	testkit.WaitFor(t, "the leader", func() bool { return g.waiters("k") == 1 })
	leaver, leave := context.WithCancel(t.Context())
	left := make(chan error, 1)
	go func() { _, err := g.Do(leaver, "k", fn); left <- err }()
	testkit.WaitFor(t, "the first joiner", func() bool { return g.waiters("k") == 2 })
	leave()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("the joiner that left got %v; want context.Canceled", err)
	}
	stayer := make(chan string, 1)
	go func() { v, _ := g.doHere(context.Background(), "k", fn); stayer <- v }()
	testkit.WaitFor(t, "the second joiner", func() bool { return g.Joins() == 2 && g.waiters("k") == 2 })
	close(release)
	if a, b := <-leader, <-stayer; a != "v" || b != "v" || loads != 1 {
		t.Fatalf("leader %q, joiner %q, %d loads; want v, v from one load", a, b, loads)
	}
}

// A load run by its caller that panics gives every caller the PanicError,
// the caller that ran it too; one that calls runtime.Goexit ends that
// caller's goroutine (as a call of the load would) and gives the callers
// that joined an ErrPanic error. Either way the key is free again.
func TestDoLoaderHerePanicAndGoexit(t *testing.T) {
	for _, exit := range []bool{false, true} {
		var g Group[string]
		release := make(chan struct{})
		leaderErr := make(chan error, 1)
		leaderEnded := make(chan struct{})
		go func() {
			defer close(leaderEnded)
			_, err := g.doHere(context.Background(), "k", func(context.Context) (string, error) {
				<-release
				if exit {
					runtime.Goexit()
				}
				panic("boom")
			})
			leaderErr <- err
		}()
		testkit.WaitFor(t, "the leader", func() bool { return g.waiters("k") == 1 })
		joinerErr := make(chan error, 1)
		go func() {
			_, err := g.Do(t.Context(), "k", func(context.Context) (string, error) { return "joiner's own load", nil })
			joinerErr <- err
		}()
		testkit.WaitFor(t, "the joiner", func() bool { return g.waiters("k") == 2 })
		close(release)
		<-leaderEnded
		if err := <-joinerErr; !errors.Is(err, ErrPanic) {
			t.Errorf("Goexit %v: the joiner got %v; want ErrPanic", exit, err)
		}
		switch {
		case exit && len(leaderErr) != 0:
			t.Errorf("Goexit: the leader's DoLoaderHere returned %v; its goroutine should have ended in it", <-leaderErr)
		case !exit:
			var pe *PanicError
			if err := <-leaderErr; !errors.As(err, &pe) || pe.Value != "boom" {
				t.Errorf("panic: the leader got %v; want the PanicError", err)
			}
		}
		v, err := g.doHere(context.Background(), "k", func(context.Context) (string, error) { return "fresh", nil })
		if err != nil || v != "fresh" || g.InFlight() != 0 {
			t.Fatalf("Goexit %v: afterwards %q, %v, InFlight %d; the key is stuck", exit, v, err, g.InFlight())
		}
	}
}

// Publish cannot reach a load its caller runs: the load's context is the
// caller's, which names no load.
func TestDoLoaderHereIsNotPublished(t *testing.T) {
	var g Group[string]
	v, err := g.doHere(context.Background(), "k", func(ctx context.Context) (string, error) {
		if g.Publish(ctx, "k", "published", nil, time.Second) {
			return "", errors.New("published")
		}
		return "loaded", nil
	})
	if err != nil || v != "loaded" {
		t.Fatalf("got %q, %v; want the load's own value", v, err)
	}
}
