package singleflight

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// The tests in this file are about loads started by a caller whose context
// cannot be cancelled, which Do runs on that caller's goroutine.

// TestInlineLoadLetsJoinersLeave: a joiner with a cancellable context may
// leave a load that runs on its leader's goroutine; the load goes on, is not
// cancelled, and can still be joined.
func TestInlineLoadLetsJoinersLeave(t *testing.T) {
	var g Group[string]
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
	waitFor(t, "the leader", func() bool { return g.waiters("k") == 1 })

	leaver, leave := context.WithCancel(t.Context())
	leftErr := make(chan error, 1)
	go func() {
		_, err := g.Do(leaver, "k", fn)
		leftErr <- err
	}()
	waitFor(t, "the joiner", func() bool { return g.waiters("k") == 2 })
	leave()
	if err := <-leftErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("the joiner got %v, want context.Canceled while the load still ran", err)
	}

	stayerDone := make(chan string, 1)
	go func() {
		v, _ := g.Do(t.Context(), "k", fn)
		stayerDone <- v
	}()
	waitFor(t, "a second joiner", func() bool { return g.Joins() == 2 && g.waiters("k") == 2 })
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

// TestInlinePanicReachesJoiners: every waiter of a load that panics on its
// leader's goroutine gets the PanicError, the leader included.
func TestInlinePanicReachesJoiners(t *testing.T) {
	var g Group[string]
	release := make(chan struct{})
	leaderErr := make(chan error, 1)
	go func() {
		_, err := g.Do(context.Background(), "k", func(context.Context) (string, error) {
			<-release
			panic("boom")
		})
		leaderErr <- err
	}()
	waitFor(t, "the leader", func() bool { return g.waiters("k") == 1 })
	joinerErr := make(chan error, 1)
	go func() {
		_, err := g.Do(t.Context(), "k", func(context.Context) (string, error) { return "joiner's own load", nil })
		joinerErr <- err
	}()
	waitFor(t, "the joiner", func() bool { return g.waiters("k") == 2 })
	close(release)
	for who, c := range map[string]chan error{"leader": leaderErr, "joiner": joinerErr} {
		var pe *PanicError
		if err := <-c; !errors.As(err, &pe) || pe.Value != "boom" {
			t.Errorf("%s got %v, want the PanicError", who, err)
		}
	}
}

// TestInlineGoexitEndsLeaderOnly: a load that calls runtime.Goexit on its
// leader's goroutine ends that goroutine (as any call would), the joiners
// get ErrPanic, and the key is free.
func TestInlineGoexitEndsLeaderOnly(t *testing.T) {
	var g Group[string]
	release := make(chan struct{})
	leaderReturned := false
	leaderEnded := make(chan struct{})
	go func() {
		defer close(leaderEnded)
		_, _ = g.Do(context.Background(), "k", func(context.Context) (string, error) {
			<-release
			runtime.Goexit()
			return "never", nil
		})
		leaderReturned = true
	}()
	waitFor(t, "the leader", func() bool { return g.waiters("k") == 1 })
	joinerErr := make(chan error, 1)
	go func() {
		_, err := g.Do(t.Context(), "k", func(context.Context) (string, error) { return "joiner's own load", nil })
		joinerErr <- err
	}()
	waitFor(t, "the joiner", func() bool { return g.waiters("k") == 2 })
	close(release)
	<-leaderEnded
	if leaderReturned {
		t.Error("Do returned on a goroutine that its load had ended with runtime.Goexit")
	}
	if err := <-joinerErr; !errors.Is(err, ErrPanic) {
		t.Errorf("joiner got %v, want ErrPanic", err)
	}
	v, err := g.Do(context.Background(), "k", func(context.Context) (string, error) { return "fresh", nil })
	if err != nil || v != "fresh" || g.InFlight() != 0 {
		t.Fatalf("after the Goexit Do = %q, %v, InFlight = %d; the key is stuck", v, err, g.InFlight())
	}
}

// TestInlineLoadAllocatesOnlyItsRecord: a load nobody joins, started with a
// context that cannot be cancelled, costs one allocation (its record): no
// goroutine, no context, no channel.
func TestInlineLoadAllocatesOnlyItsRecord(t *testing.T) {
	var g Group[int]
	ctx := context.Background()
	fn := func(context.Context) (int, error) { return 1, nil }
	allocs := testing.AllocsPerRun(1000, func() {
		if v, err := g.Do(ctx, "k", fn); v != 1 || err != nil {
			t.Fatalf("Do = %d, %v", v, err)
		}
	})
	if allocs > 1 {
		t.Fatalf("an inline load allocated %.1f times, want at most 1", allocs)
	}
}
