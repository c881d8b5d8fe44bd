package progress_test

import (
	"context"
	"testing"

	"github.com/geecache/geecache/internal/progress"
)

type otherKey struct{}

// counter is a Listener that counts its calls.
type counter int

func (c *counter) Progress() { *c++ }

func TestReport(t *testing.T) {
	progress.Report(context.Background()) // no callback: nothing to call, no panic
	var n counter
	ctx := progress.With(context.Background(), &n)
	progress.Report(ctx)
	progress.Report(context.WithValue(ctx, otherKey{}, 1)) // through a child context
	if n != 2 {
		t.Fatalf("the callback ran %d times, want 2", n)
	}
}

func TestWanted(t *testing.T) {
	if progress.Wanted(context.Background()) {
		t.Fatal("Wanted without a callback")
	}
	ctx := progress.With(context.Background(), new(counter))
	if !progress.Wanted(context.WithValue(ctx, otherKey{}, 1)) {
		t.Fatal("not Wanted with a callback in a parent context")
	}
}

func TestFunc(t *testing.T) {
	n := 0
	progress.Report(progress.With(context.Background(), progress.Func(func() { n++ })))
	if n != 1 {
		t.Fatalf("the Func ran %d times, want 1", n)
	}
}
