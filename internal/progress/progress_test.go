package progress_test

import (
	"context"
	"testing"

	"github.com/geecache/geecache/internal/progress"
)

type otherKey struct{}

func TestReport(t *testing.T) {
	progress.Report(context.Background()) // no callback: nothing to call, no panic
	n := 0
	ctx := progress.With(context.Background(), func() { n++ })
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
	ctx := progress.With(context.Background(), func() {})
	if !progress.Wanted(context.WithValue(ctx, otherKey{}, 1)) {
		t.Fatal("not Wanted with a callback in a parent context")
	}
}
