package singleflight

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/internal/testkit"
)

// goroutineID returns the id of the calling goroutine, from its stack's
// header ("goroutine 7 [running]:").
func goroutineID() string {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	f := bytes.Fields(buf[:n])
	if len(f) < 2 {
		return ""
	}
	return string(f[1])
}

// idleWorker reports whether goroutine id is a worker waiting for a load,
// from the stacks of all goroutines.
func idleWorker(id string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.HasPrefix(g, []byte("goroutine "+id+" [chan receive")) && bytes.Contains(g, []byte(").worker(")) {
			return true
		}
	}
	return false
}

// Loads started one after another by callers that can leave run on one
// worker goroutine, not the callers' own and not a new one each; a load
// that ends its worker with runtime.Goexit does not stop the next.
func TestDetachedLoadsReuseAWorker(t *testing.T) {
	var g Group[string, struct{}]
	ctx := t.Context() // can be cancelled: loads are detached
	self := goroutineID()
	load := func(context.Context) (string, error) { return goroutineID(), nil }
	first, err := g.Do(ctx, "a", load)
	if err != nil || first == "" || first == self {
		t.Fatalf("first load ran on goroutine %q (the caller is %q), err %v; want a worker", first, self, err)
	}
	for _, key := range []string{"b", "c", "d"} {
		// The worker waits workerIdle for the next load once it is idle.
		testkit.WaitFor(t, "the worker to be idle", func() bool { return idleWorker(first) })
		if got, err := g.Do(ctx, key, load); err != nil || got != first {
			t.Fatalf("load of %s ran on goroutine %q, err %v; want the worker %q again", key, got, err, first)
		}
	}
	if _, err := g.Do(ctx, "exit", func(context.Context) (string, error) {
		runtime.Goexit()
		return "", nil
	}); err == nil {
		t.Fatal("a load that called runtime.Goexit returned no error")
	}
	if got, err := g.Do(ctx, "after", load); err != nil || got == "" || got == self {
		t.Fatalf("after a Goexit: goroutine %q, %v; want a (new) worker", got, err)
	}
}

// alive reports whether goroutine id exists, from the stacks of all
// goroutines.
func alive(id string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Contains(buf, []byte("goroutine "+id+" ["))
}

// A worker ends between one and two workerIdle after its last load, and
// one that has just run a load is the one the next load gets; workers
// started together for concurrent loads all end.
func TestIdleWorkersEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[string, struct{}]
		ctx := t.Context()
		load := func(context.Context) (string, error) { return goroutineID(), nil }
		first, err := g.Do(ctx, "a", load)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(workerIdle - time.Millisecond)
		synctest.Wait()
		if !idleWorker(first) {
			t.Fatalf("worker %s ended before workerIdle", first)
		}
		if got, _ := g.Do(ctx, "b", load); got != first {
			t.Fatalf("load ran on %s; want the parked worker %s", got, first)
		}
		time.Sleep(2*workerIdle + time.Millisecond)
		synctest.Wait()
		if alive(first) {
			t.Fatalf("worker %s still runs two workerIdle after its last load", first)
		}

		// Concurrent loads start a worker each: they all end (synctest.Test
		// fails if a goroutine of its bubble is left when it returns).
		release := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				g.Do(ctx, strconv.Itoa(i), func(context.Context) (string, error) { <-release; return "", nil })
			})
		}
		synctest.Wait()
		close(release)
		wg.Wait()
		time.Sleep(2*workerIdle + time.Millisecond)
	})
}
