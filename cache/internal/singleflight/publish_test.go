package singleflight

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A load that publishes early gives its callers that result at once, while
// it goes on: its context is cancelled only after the grace, what it
// returns later is dropped, and a caller that comes after the publish
// starts a load of its own. Publish is refused a second time, after the
// load has ended, for a context that is not a load of the group, and for
// another key than the load's.
func TestPublishAnswersCallersWhileTheLoadGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[string]
		if g.Publish(t.Context(), "k", "x", nil, 0) {
			t.Fatal("Publish with a context that is not a load's succeeded")
		}
		loadEnded := make(chan error, 1)
		again := make(chan bool, 1)
		got, err := g.Do(t.Context(), "k", func(ctx context.Context) (string, error) {
			if g.Publish(ctx, "other", "wrong", nil, time.Second) {
				t.Error("Publish for another key accepted this key's load")
			}
			if !g.Publish(ctx, "k", "early", nil, time.Second) {
				t.Error("the first Publish was refused")
			}
			again <- g.Publish(ctx, "k", "twice", nil, time.Second)
			go func() { // the caller has its answer: let the load go on
				defer func() { loadEnded <- ctx.Err() }()
				select {
				case <-ctx.Done():
				case <-time.After(time.Hour):
				}
			}()
			<-ctx.Done()
			return "late", errors.New("dropped")
		})
		if got != "early" || err != nil {
			t.Fatalf("Do = %q, %v; want the published \"early\", nil", got, err)
		}
		if <-again {
			t.Error("a second Publish succeeded")
		}
		start := time.Now()
		if err := <-loadEnded; !errors.Is(err, context.Canceled) {
			t.Fatalf("the load's context ended with %v; want Canceled after the grace", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("the load went on for %v after the publish; want the grace, 1s", d)
		}
		// A new caller starts a fresh load: the published one is not joined.
		got, err = g.Do(t.Context(), "k", func(context.Context) (string, error) { return "fresh", nil })
		if got != "fresh" || err != nil {
			t.Fatalf("Do after the publish = %q, %v; want a fresh load", got, err)
		}
		var other Group[string]
		_, _ = g.Do(t.Context(), "k2", func(ctx context.Context) (string, error) {
			if other.Publish(ctx, "k2", "x", nil, 0) {
				t.Error("Publish of another group accepted this group's load")
			}
			return "", nil
		})
		time.Sleep(time.Minute) // idle workers end
	})
}
