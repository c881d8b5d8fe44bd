package singleflight

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// flightFunc is a function of a load's context and Flight as a Loader.
type flightFunc[V any] func(ctx context.Context, f Flight[V, struct{}]) (V, error)

func (fn flightFunc[V]) Load(ctx context.Context, _ string, _ struct{}, f Flight[V, struct{}]) (V, error) {
	return fn(ctx, f)
}

// A load that publishes early gives its callers that result at once, while
// it goes on: its context is cancelled only after the grace, what it
// returns later is dropped, and a caller that comes after the publish
// starts a load of its own. Publish is refused a second time, after the
// load has ended, and through the zero Flight; the Flight of another
// load (of another key, started by this one) publishes to that load only.
func TestPublishAnswersCallersWhileTheLoadGoesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Group[string, struct{}]
		if (Flight[string, struct{}]{}).Publish("x", nil, 0) {
			t.Fatal("Publish through the zero Flight succeeded")
		}
		loadEnded := make(chan error, 1)
		again := make(chan bool, 1)
		flight := make(chan Flight[string, struct{}], 2)
		got, err := g.DoLoader(t.Context(), "k", flightFunc[string](func(ctx context.Context, f Flight[string, struct{}]) (string, error) {
			flight <- f
			other, _ := g.DoLoader(ctx, "other", flightFunc[string](func(_ context.Context, of Flight[string, struct{}]) (string, error) {
				if !of.Publish("other's", nil, 0) {
					t.Error("the other load's Publish was refused")
				}
				return "", nil
			}), struct{}{})
			if other != "other's" {
				t.Errorf("the other load's caller got %q, want its published value", other)
			}
			if !f.Publish("early", nil, time.Second) {
				t.Error("the first Publish was refused: another load's Flight settled this one")
			}
			again <- f.Publish("twice", nil, time.Second)
			go func() { // the caller has its answer: let the load go on
				defer func() { loadEnded <- ctx.Err() }()
				select {
				case <-ctx.Done():
				case <-time.After(time.Hour):
				}
			}()
			<-ctx.Done()
			return "late", errors.New("dropped")
		}), struct{}{})
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
		// The Flight of a load that has ended publishes nothing.
		g.DoLoader(t.Context(), "k2", flightFunc[string](func(_ context.Context, f Flight[string, struct{}]) (string, error) {
			flight <- f
			return "returned", nil
		}), struct{}{})
		synctest.Wait() // the load has ended
		<-flight
		if f := <-flight; f.Publish("x", nil, 0) {
			t.Error("the Flight of a load that had ended published")
		}
		time.Sleep(time.Minute) // idle workers end
	})
}
