package singleflight

import (
	"context"
	"errors"
	"fmt"
	"github.com/geecache/geecache/internal/testkit"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func (g *Group[V, A]) waiters(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.calls[key]; c != nil {
		return int(c.waiters)
	}
	return 0
}

// callerContexts are the two kinds of callers Do serves differently: one
// whose context can be cancelled (the load runs in a goroutine of its own)
// and one whose context cannot (the load runs on the caller's goroutine).
func callerContexts(t *testing.T) map[string]context.Context {
	return map[string]context.Context{
		"cancellable": t.Context(),
		"background":  context.Background(),
	}
}

func TestDoSharesOneLoad(t *testing.T) {
	for name, ctx := range callerContexts(t) {
		t.Run(name, func(t *testing.T) {
			var g Group[string, struct{}]
			var calls atomic.Int32
			release := make(chan struct{})
			const n = 50
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					v, err := g.Do(ctx, "k", func(context.Context) (string, error) {
						calls.Add(1)
						<-release
						return "v", nil
					})
					if err != nil || v != "v" {
						t.Errorf("Do = %q, %v", v, err)
					}
				})
			}
			testkit.WaitFor(t, "all callers to wait", func() bool { return g.waiters("k") == n })
			close(release)
			wg.Wait()
			if calls.Load() != 1 || g.Joins() != n-1 {
				t.Fatalf("calls = %d, joins = %d; want 1, %d", calls.Load(), g.Joins(), n-1)
			}
			if g.InFlight() != 0 {
				t.Fatalf("InFlight = %d after the load", g.InFlight())
			}
		})
	}
}

func TestWaiterLeavesWithoutCancellingOthers(t *testing.T) {
	var g Group[string, struct{}]
	release := make(chan struct{})
	loadCtxErr := make(chan error, 1)
	fn := func(ctx context.Context) (string, error) {
		<-release
		loadCtxErr <- ctx.Err()
		return "v", nil
	}
	leaver, leave := context.WithCancel(t.Context())
	leftErr := make(chan error, 1)
	go func() {
		_, err := g.Do(leaver, "k", fn)
		leftErr <- err
	}()
	testkit.WaitFor(t, "first caller", func() bool { return g.waiters("k") == 1 })
	stayerDone := make(chan string, 1)
	go func() {
		v, _ := g.Do(t.Context(), "k", fn)
		stayerDone <- v
	}()
	testkit.WaitFor(t, "second caller", func() bool { return g.waiters("k") == 2 })
	leave()
	if err := <-leftErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("leaver got %v, want context.Canceled", err)
	}
	close(release)
	if v := <-stayerDone; v != "v" {
		t.Fatalf("stayer got %q", v)
	}
	if err := <-loadCtxErr; err != nil {
		t.Fatalf("load context was cancelled (%v) although a caller still waited", err)
	}
}

func TestLoadCancelledWhenAllLeave(t *testing.T) {
	var g Group[string, struct{}]
	loadErr := make(chan error, 1)
	ctx, cancel := context.WithCancel(t.Context())
	started := make(chan struct{})
	go func() {
		_, _ = g.Do(ctx, "k", func(ctx context.Context) (string, error) {
			close(started)
			<-ctx.Done()
			loadErr <- ctx.Err()
			return "", ctx.Err()
		})
	}()
	<-started
	cancel()
	if err := <-loadErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("load ctx err = %v", err)
	}
	testkit.WaitFor(t, "load to finish", func() bool { return g.InFlight() == 0 })
}

func TestPanicIsAnErrorAndKeyIsFree(t *testing.T) {
	for name, ctx := range callerContexts(t) {
		t.Run(name, func(t *testing.T) {
			var g Group[string, struct{}]
			_, err := g.Do(ctx, "k", func(context.Context) (string, error) { panic("boom") })
			var pe *PanicError
			if !errors.Is(err, ErrPanic) || !errors.As(err, &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
				t.Fatalf("err = %v, want a PanicError with value and stack", err)
			}
			v, err := g.Do(ctx, "k", func(context.Context) (string, error) { return "ok", nil })
			if err != nil || v != "ok" {
				t.Fatalf("after a panic Do = %q, %v; the key is stuck", v, err)
			}
			if g.InFlight() != 0 {
				t.Fatalf("InFlight = %d after the loads", g.InFlight())
			}
		})
	}
}

func TestValuesOfFirstCallerKept(t *testing.T) {
	type ctxKey struct{}
	for name, parent := range callerContexts(t) {
		t.Run(name, func(t *testing.T) {
			var g Group[string, struct{}]
			ctx := context.WithValue(parent, ctxKey{}, "trace-1")
			v, _ := g.Do(ctx, "k", func(ctx context.Context) (string, error) {
				s, _ := ctx.Value(ctxKey{}).(string)
				return s, nil
			})
			if v != "trace-1" {
				t.Fatalf("load context lost the caller's values: %q", v)
			}
		})
	}
}

func TestCancelledCallerStartsNothing(t *testing.T) {
	var g Group[string, struct{}]
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := g.Do(ctx, "k", func(context.Context) (string, error) {
		t.Error("load started for a caller that had already gone")
		return "", nil
	})
	if !errors.Is(err, context.Canceled) || g.InFlight() != 0 {
		t.Fatalf("err = %v, InFlight = %d", err, g.InFlight())
	}
}

// TestJoinAfterAllLeftStartsFresh: once every caller has left a load, a
// new caller must not join it and inherit the others' cancellation.
func TestJoinAfterAllLeftStartsFresh(t *testing.T) {
	var g Group[string, struct{}]
	release := make(chan struct{})
	first := func(ctx context.Context) (string, error) {
		<-release // ignores ctx for a while, like a slow source
		return "", ctx.Err()
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := g.Do(ctx, "k", first)
		errc <- err
	}()
	testkit.WaitFor(t, "first caller", func() bool { return g.waiters("k") == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("first caller: %v", err)
	}
	// The abandoned load is still running; a new caller starts its own.
	v, err := g.Do(t.Context(), "k", func(context.Context) (string, error) { return "fresh", nil })
	if err != nil || v != "fresh" {
		t.Fatalf("second caller got %q, %v; want a fresh load", v, err)
	}
	close(release)
	testkit.WaitFor(t, "the abandoned load to end", func() bool { return g.InFlight() == 0 })
}

func TestGoexitIsAnErrorNotAValue(t *testing.T) {
	var g Group[string, struct{}]
	_, err := g.Do(t.Context(), "k", func(context.Context) (string, error) {
		runtime.Goexit()
		return "never", nil
	})
	if !errors.Is(err, ErrPanic) {
		t.Fatalf("err = %v, want ErrPanic", err)
	}
}

func TestForgetStartsAFreshLoad(t *testing.T) {
	var g Group[int, struct{}]
	release := make(chan struct{})
	started := make(chan struct{})
	var calls atomic.Int32
	first := make(chan int, 1)
	go func() {
		v, _ := g.Do(context.Background(), "k", func(context.Context) (int, error) {
			calls.Add(1)
			close(started)
			<-release
			return 1, nil
		})
		first <- v
	}()
	<-started
	g.Forget("k")
	v, err := g.Do(context.Background(), "k", func(context.Context) (int, error) { calls.Add(1); return 2, nil })
	if err != nil || v != 2 || calls.Load() != 2 {
		t.Fatalf("after Forget: %d, %v, %d loads; want a fresh load giving 2", v, err, calls.Load())
	}
	close(release)
	if v := <-first; v != 1 {
		t.Fatalf("the first caller got %d, want the old load's 1", v)
	}
}

// testArg is an argument of the shape a cache passes: an interface, a
// number too large for the runtime's preallocated small values, a flag.
type testArg struct {
	who  any
	n    uint64
	flag bool
}

// argLoader loads "ok" if its argument is the one the test passes (its n
// counts up from 1<<40), else an error that says what it got.
type argLoader struct{}

func (*argLoader) Load(_ context.Context, _ string, a testArg, _ Flight[string, testArg]) (string, error) {
	if a.who != "w" || a.n < 1<<40 || !a.flag {
		return "", fmt.Errorf("the loader got %+v", a)
	}
	return "ok", nil
}

// DoLoader hands its Loader the argument, and a load with one costs no
// more allocations than a load without: the argument travels by value,
// not boxed in an interface (that would cost one per load).
func TestDoLoaderPassesItsArgumentWithoutAllocating(t *testing.T) {
	var g Group[string, testArg]
	ctx := context.Background()
	l := new(argLoader)
	arg := testArg{who: "w", n: 1 << 40, flag: true}
	if v, err := g.DoLoader(ctx, "k", l, arg); v != "ok" || err != nil {
		t.Fatalf("DoLoader = %q, %v; want the argument passed", v, err)
	}
	fn := func(context.Context) (string, error) { return "", nil }
	// Many runs: a load that finds no parked worker (its last one has not
	// parked yet) costs a few allocations of its own, which these absorb
	// (AllocsPerRun rounds down) where a boxed argument would not.
	const runs = 1000
	var none Group[string, struct{}] // loads without an argument
	plain := testing.AllocsPerRun(runs, func() { _, _ = none.Do(ctx, "k", fn) })
	withArg := testing.AllocsPerRun(runs, func() {
		arg.n++
		if v, err := g.DoLoader(ctx, "k", l, arg); v != "ok" {
			t.Fatal(err)
		}
	})
	if withArg > plain {
		t.Fatalf("a load with an argument made %v allocations, one without %v; want no more", withArg, plain)
	}
}
