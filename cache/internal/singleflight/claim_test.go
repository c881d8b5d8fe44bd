package singleflight

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// A claimed key is loaded by its claimer: a Do of it waits for Finish and
// gets its result, a second Claim joins, and after Finish the key is free.
// ForgetAll makes a load in flight one that no new caller joins.
func TestClaim(t *testing.T) {
	var g Group[string]
	ctx := context.Background()
	cl := g.Claim(ctx, "k")
	if cl.Joined() {
		t.Fatal("the first Claim joined")
	}
	got := make(chan string, 1)
	go func() {
		v, _ := g.Do(ctx, "k", func(context.Context) (string, error) { return "a second load", nil })
		got <- v
	}()
	for i := 0; !g.Others(cl); i++ {
		if i > 1e6 {
			t.Fatal("the Do never joined the claimed load")
		}
		runtime.Gosched()
	}
	j := g.Claim(ctx, "k")
	if !j.Joined() {
		t.Fatal("a Claim during the claimed load did not join it")
	}
	g.Finish("k", cl, "claimed", nil)
	if v := <-got; v != "claimed" {
		t.Fatalf("the Do got %q, want the claimer's value", v)
	}
	if v, err := g.Wait(ctx, "k", j); v != "claimed" || err != nil {
		t.Fatalf("the joined Claim got %q, %v", v, err)
	}
	if g.InFlight() != 0 {
		t.Fatal("a load is in flight after Finish")
	}
	again := g.Claim(ctx, "k")
	if again.Joined() {
		t.Fatal("the key is not free after Finish")
	}
	g.ForgetAll()
	v, err := g.Do(ctx, "k", func(context.Context) (string, error) { return "", errors.New("fresh") })
	if err == nil || v != "" {
		t.Fatalf("after ForgetAll a Do joined the old load: %q, %v", v, err)
	}
	g.Finish("k", again, "", nil)
	g.Finish("k", Claim[string]{}, "", nil) // a zero Claim is left alone
}
