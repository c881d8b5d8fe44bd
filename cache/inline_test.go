package cache_test

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// The tests in this file are about the local load of a Get whose context
// cannot be cancelled (context.Background()): its caller can never leave,
// so the load runs on the caller's goroutine instead of a worker's.

// goroutineID returns the id of the calling goroutine, from its stack.
func goroutineID() string {
	var buf [64]byte
	f := bytes.Fields(buf[:runtime.Stack(buf[:], false)])
	if len(f) < 2 {
		return ""
	}
	return string(f[1])
}

// A Get with a context that cannot be cancelled calls the Getter on its
// own goroutine; one whose context can be, and a peer's GetLocal with
// either, on another (a worker).
func TestBackgroundGetLoadsOnItsGoroutine(t *testing.T) {
	var loadedOn string // written before the load returns, read after
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		loadedOn = goroutineID()
		return []byte("v:" + key), nil
	})
	g := newGroup(t, 1<<20, src)
	self := goroutineID()
	for i, tc := range []struct {
		name string
		ctx  context.Context
		here bool
		get  func(ctx context.Context, key string) (cache.ByteView, error)
	}{
		{"Get, Background", context.Background(), true, g.Get},
		{"Get, WithoutCancel", context.WithoutCancel(t.Context()), true, g.Get},
		{"Get, cancellable", t.Context(), false, g.Get},
		{"GetLocal, Background", context.Background(), false, func(ctx context.Context, key string) (cache.ByteView, error) {
			v, _, err := g.GetLocal(ctx, key)
			return v, err
		}},
	} {
		key := strconv.Itoa(i)
		v, err := tc.get(tc.ctx, key)
		if err != nil || v.String() != "v:"+key {
			t.Fatalf("%s: %q, %v", tc.name, v, err)
		}
		if here := loadedOn == self; here != tc.here {
			t.Errorf("%s: loaded on the caller's goroutine: %v; want %v", tc.name, here, tc.here)
		}
	}
}

// A Getter's runtime.Goexit under a Get whose context cannot be cancelled
// ends the goroutine that called Get, as a call of the Getter would (so
// t.FailNow in a Getter called from a test's goroutine ends the test); a
// Get that joined the load gets ErrGetterPanic, and the next Get of the key
// loads it anew.
func TestGetterGoexitEndsBackgroundGet(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var loads atomic.Int32
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if loads.Add(1) == 1 {
			close(entered)
			<-release
			runtime.Goexit()
		}
		return []byte("v:" + key), nil
	})
	g := newGroup(t, 1<<20, src)
	ended, returned := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = g.Get(context.Background(), "k")
		close(returned)
	}()
	<-entered
	joined := make(chan error, 1)
	go func() {
		_, err := g.Get(t.Context(), "k")
		joined <- err
	}()
	testkit.WaitFor(t, "the second Get to join the load", func() bool { return g.Stats().DedupWaits == 1 })
	close(release)
	<-ended
	select {
	case <-returned:
		t.Fatal("Get returned: the load did not run on its caller's goroutine")
	default:
	}
	if err := <-joined; !errors.Is(err, cache.ErrGetterPanic) {
		t.Fatalf("the Get that joined got %v; want ErrGetterPanic", err)
	}
	if v, err := g.Get(context.Background(), "k"); err != nil || v.String() != "v:k" || loads.Load() != 2 {
		t.Fatalf("next Get = %q, %v after %d loads; want v:k from a second load", v, err, loads.Load())
	}
	if n := g.InFlight(); n != 0 {
		t.Fatalf("InFlight = %d", n)
	}
}

// A miss with a context that cannot be cancelled makes three allocations
// (the flight's record of the load, the cache's copy of the value, and its
// entry in memory): no goroutine hand-off, so no channel for it. One
// whose context can be cancelled makes one more (the channel its caller
// waits on).
func TestBackgroundMissAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures are not asserted under the race detector")
	}
	value := make([]byte, 64)
	g := newGroup(t, 32<<20, getter.Func(func(context.Context, string) ([]byte, error) { return value, nil }))
	for _, tc := range []struct {
		name string
		ctx  context.Context
		max  float64
	}{{"Background", context.Background(), 3}, {"cancellable", t.Context(), 4}} {
		keys := make([]string, 501) // fresh keys, made beforehand: AllocsPerRun's warm-up and 500 runs
		for i := range keys {
			keys[i] = tc.name + strconv.Itoa(i)
		}
		i := 0
		n := testing.AllocsPerRun(len(keys)-1, func() {
			k := keys[i]
			i++
			if v, err := g.Get(tc.ctx, k); err != nil || v.Len() != 64 {
				t.Fatalf("Get = %d bytes, %v", v.Len(), err)
			}
		})
		t.Logf("%s: %.1f allocations per miss", tc.name, n)
		if n > tc.max {
			t.Errorf("a %s miss makes %.1f allocations; want at most %.0f", tc.name, n, tc.max)
		}
	}
}

// countingRouter is a peer set that owns no key but this node's and
// counts the questions a group asks it.
type countingRouter struct{ picks, fallbacks atomic.Int64 }

func (r *countingRouter) PickPeer(string) (cache.PeerGetter, bool) {
	r.picks.Add(1)
	return nil, false
}

func (r *countingRouter) PickFallback(string, func(cache.PeerGetter) bool) (next, previous cache.PeerGetter, changed time.Time) {
	r.fallbacks.Add(1)
	return nil, nil, time.Time{}
}

// countingPicker is countingRouter without PickFallback: a peer set that
// names no next or previous owners.
type countingPicker struct{ r countingRouter }

func (p *countingPicker) PickPeer(key string) (cache.PeerGetter, bool) { return p.r.PickPeer(key) }

// A local load asks the peer set who owns its key once (the group's
// answer goes with the load, for the credit a key taken over gets), and
// for the key's previous owner once (for a handoff), whether a Get or a
// peer's GetLocal asked.
func TestLocalLoadAsksTheRingOnce(t *testing.T) {
	src := getter.Map(map[string]string{"a": "1"})
	for _, tc := range []struct {
		name             string
		local            bool
		picks, fallbacks int64
	}{
		{name: "Get, router", local: false, picks: 1, fallbacks: 1},
		{name: "GetLocal, router", local: true, picks: 1, fallbacks: 1},
		{name: "Get, plain picker", local: false, picks: 1},
		{name: "GetLocal, plain picker", local: true, picks: 1},
	} {
		r := &countingRouter{}
		var peers cache.PeerPicker = r
		if strings.HasSuffix(tc.name, "plain picker") {
			p := &countingPicker{}
			peers, r = p, &p.r
		}
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: peers, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"a", "missing"} {
			before, beforeFb := r.picks.Load(), r.fallbacks.Load()
			var err error
			if tc.local {
				_, _, err = g.GetLocal(context.Background(), key)
			} else {
				_, err = g.Get(context.Background(), key)
			}
			if (key == "a") != (err == nil) {
				t.Fatalf("%s(%s): %v", tc.name, key, err)
			}
			if picks, fb := r.picks.Load()-before, r.fallbacks.Load()-beforeFb; picks != tc.picks || fb != tc.fallbacks {
				t.Errorf("%s: a local load of %s asked PickPeer %d times and PickFallback %d; want %d and %d",
					tc.name, key, picks, fb, tc.picks, tc.fallbacks)
			}
		}
	}
}

// A Getter that reads a value from its context (a trace id, a logger) on
// a worker (a Get whose context can be cancelled, or a peer's GetLocal)
// costs no allocation for it: the load's context answers from the first
// caller's context without making a context of its own.
func TestWorkerLoadContextValueAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures are not asserted under the race detector")
	}
	type traceKey struct{}
	ctx := context.WithValue(t.Context(), traceKey{}, "trace-1")
	value := make([]byte, 64)
	allocs := func(name string, reads, local bool) float64 {
		src := getter.Func(func(ctx context.Context, _ string) ([]byte, error) {
			if reads && ctx.Value(traceKey{}) != "trace-1" {
				return nil, errors.New("the load's context lost the caller's value")
			}
			return value, nil
		})
		g, err := cache.NewRegistry().NewGroup("g", 32<<20, src, &cache.GroupOptions{Peers: &countingRouter{}, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 201)
		for i := range keys {
			keys[i] = name + strconv.Itoa(i)
		}
		i := 0
		n := testing.AllocsPerRun(len(keys)-1, func() {
			k := keys[i]
			i++
			var v cache.ByteView
			var err error
			if local {
				v, _, err = g.GetLocal(ctx, k)
			} else {
				v, err = g.Get(ctx, k)
			}
			if err != nil || v.Len() != 64 {
				t.Fatalf("%s: %d bytes, %v", name, v.Len(), err)
			}
		})
		t.Logf("%s, GetLocal %v: %.1f allocations per miss", name, local, n)
		return n
	}
	for _, local := range []bool{false, true} {
		plain, reading := allocs("plain", false, local), allocs("reading", true, local)
		if reading > plain {
			t.Errorf("GetLocal %v: a miss whose Getter reads a context value makes %.1f allocations, one whose Getter does not %.1f; want no more",
				local, reading, plain)
		}
	}
}
