package singleflight

import (
	"context"
	"errors"
	"github.com/geecache/geecache/internal/testkit"
	"runtime"
	"testing"
)

// The tests in this file are about loads started by a caller whose context
// cannot be cancelled (context.Background()): such a caller can never
// leave, yet its load must behave as any other.

// TestBackgroundLoadLetsJoinersLeave: a joiner with a cancellable context
// may leave a load whose leader cannot leave; the load goes on, is not
// cancelled, and can still be joined.
func TestBackgroundLoadLetsJoinersLeave(t *testing.T) {
	var g Group[string, struct{}]
	release := make(chan struct{})
	loadCtxErr := make(chan error, 1)
	var calls int
	fn := func(ctx context.Context) (string, error) {
		calls++ // only ever one load: no race
		<-release
		loadCtxErr <- ctx.Err()
		return "v", nil
	}
	leaderDone := make(chan string, 1)
	go func() {
		v, _ := g.Do(context.Background(), "k", fn)
		leaderDone <- v
	}()
	testkit.WaitFor(t, "the leader", func() bool { return g.waiters("k") == 1 })

	leaver, leave := context.WithCancel(t.Context())
	leftErr := make(chan error, 1)
	go func() {
		_, err := g.Do(leaver, "k", fn)
		leftErr <- err
	}()
	testkit.WaitFor(t, "the joiner", func() bool { return g.waiters("k") == 2 })
	leave()
	if err := <-leftErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the joiner got %v, want context.Canceled while the load still ran", err)
	}

	stayerDone := make(chan string, 1)
	go func() {
		v, _ := g.Do(t.Context(), "k", fn)
		stayerDone <- v
	}()
	testkit.WaitFor(t, "a second joiner", func() bool { return g.Joins() == 2 && g.waiters("k") == 2 })
	close(release)
	if v1, v2 := <-leaderDone, <-stayerDone; v1 != "v" || v2 != "v" {
		t.Fatalf("leader got %q, joiner got %q; want v, v", v1, v2)
	}
	if err := <-loadCtxErr; err != nil {
		t.Fatalf("load context was cancelled (%v) although its leader still waited", err)
	}
	if calls != 1 || g.InFlight() != 0 {
		t.Fatalf("loads = %d, InFlight = %d; want 1, 0", calls, g.InFlight())
	}
}

// TestBackgroundPanicReachesJoiners: every waiter of a load that panics gets
// the PanicError, the leader included.
func TestBackgroundPanicReachesJoiners(t *testing.T) {
	var g Group[string, struct{}]
	release := make(chan struct{})
	leaderErr := make(chan error, 1)
	go func() {
		_, err := g.Do(context.Background(), "k", func(context.Context) (string, error) {
			<-release
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
	for who, c := range map[string]chan error{"leader": leaderErr, "joiner": joinerErr} {
		var pe *PanicError
		if err := <-c; !errors.As(err, &pe) || pe.Value != "boom" {
			t.Errorf("%s got %v, want the PanicError", who, err)
		}
	}
}

// TestBackgroundGoexitReturns: a load that calls runtime.Goexit (as
// t.FailNow does) gives its leader, whose context cannot be cancelled, and
// its joiners an ErrPanic error: Do returns on every caller's goroutine,
// and the key is free.
func TestBackgroundGoexitReturns(t *testing.T) {
	var g Group[string, struct{}]
	release := make(chan struct{})
	leaderErr := make(chan error, 1)
	leaderEnded := make(chan struct{})
	go func() {
		defer close(leaderEnded)
		_, err := g.Do(context.Background(), "k", func(context.Context) (string, error) {
			<-release
			runtime.Goexit()
			return "never", nil
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
	if len(leaderErr) == 0 {
		t.Fatal("the leader's goroutine ended inside Do: the load's runtime.Goexit ran on it")
	}
	for who, c := range map[string]chan error{"leader": leaderErr, "joiner": joinerErr} {
		if err := <-c; !errors.Is(err, ErrPanic) {
			t.Errorf("%s got %v, want ErrPanic", who, err)
		}
	}
	v, err := g.Do(context.Background(), "k", func(context.Context) (string, error) { return "fresh", nil })
	if err != nil || v != "fresh" || g.InFlight() != 0 {
		t.Fatalf("after the Goexit Do = %q, %v, InFlight = %d; the key is stuck", v, err, g.InFlight())
	}
}
