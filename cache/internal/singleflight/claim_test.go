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
	var g Group[string, struct{}]
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
	g.Finish("k", Claim[string, struct{}]{}, "", nil) // a zero Claim is left alone
}

// ClaimMany claims each key as Claim does: a key in flight is joined, a
// key twice in the list joins its first claim, a Do of a claimed key waits
// for its Finish (whose done channel the joiner made), a claim nobody
// joined finishes without one, and the keys are free afterwards. It makes
// one allocation for its records, where a Claim each makes two.
func TestClaimMany(t *testing.T) {
	var g Group[string, struct{}]
	ctx := context.Background()
	inFlight := g.Claim(ctx, "b")
	keys := []string{"a", "b", "c", "a"}
	cls := make([]Claim[string, struct{}], len(keys))
	g.ClaimMany(ctx, keys, cls)
	for i, want := range []bool{false, true, false, true} {
		if cls[i].Joined() != want {
			t.Fatalf("claim %d (%s): joined %v, want %v", i, keys[i], cls[i].Joined(), want)
		}
	}
	got := make(chan string, 1)
	go func() {
		v, _ := g.Do(ctx, "c", func(context.Context) (string, error) { return "a second load", nil })
		got <- v
	}()
	for i := 0; !g.Others(cls[2]); i++ {
		if i > 1e6 {
			t.Fatal("the Do never joined the claimed load")
		}
		runtime.Gosched()
	}
	g.Finish("a", cls[0], "va", nil) // its only joiner is cls[3]
	g.Finish("c", cls[2], "vc", nil)
	g.Finish("b", inFlight, "vb", nil)
	if v := <-got; v != "vc" {
		t.Fatalf("the Do of c got %q, want the claimer's value", v)
	}
	for i, want := range map[int]string{1: "vb", 3: "va"} {
		if v, err := g.Wait(ctx, keys[i], cls[i]); v != want || err != nil {
			t.Fatalf("joined claim %d got %q, %v; want %q", i, v, err, want)
		}
	}
	if g.InFlight() != 0 {
		t.Fatal("a load is in flight after every Finish")
	}
	// Nobody joins these: each finishes without a done channel.
	fresh := make([]Claim[string, struct{}], 100)
	many := make([]string, len(fresh))
	for i := range many {
		many[i] = string(rune('A' + i))
	}
	if n := testing.AllocsPerRun(10, func() {
		g.ClaimMany(ctx, many, fresh)
		for i, cl := range fresh {
			g.Finish(many[i], cl, "", nil)
		}
	}); n > 1 {
		t.Fatalf("ClaimMany and Finish of %d keys: %v allocations, want 1", len(many), n)
	}
	a := g.Claim(ctx, "A")
	if g.InFlight() != 1 || a.Joined() {
		t.Fatal("a key is not free after Finish")
	}
	g.Finish("A", a, "", nil)
}

// JoinMany joins the loads in flight and claims nothing else: a key not
// in flight gets the zero Claim and stays free, a joined one gets the
// load's result from Wait.
func TestJoinMany(t *testing.T) {
	var g Group[string, struct{}]
	ctx := context.Background()
	cl := g.Claim(ctx, "busy")
	claims := make([]Claim[string, struct{}], 2)
	if n := g.JoinMany([]string{"busy", "idle"}, claims); n != 1 {
		t.Fatalf("JoinMany joined %d keys, want 1", n)
	}
	if !claims[0].Joined() || claims[1].Joined() || claims[1].c != nil {
		t.Fatalf("claims = %+v, want the first joined and the second zero", claims)
	}
	if !g.Others(cl) {
		t.Fatal("the joined load has no other waiter")
	}
	if free := g.Claim(ctx, "idle"); free.Joined() {
		t.Fatal("JoinMany claimed a key that was not in flight")
	} else {
		g.Finish("idle", free, "", nil)
	}
	g.Finish("busy", cl, "v", nil)
	if v, err := g.Wait(ctx, "busy", claims[0]); v != "v" || err != nil {
		t.Fatalf("the joined claim got %q, %v", v, err)
	}
	if g.InFlight() != 0 {
		t.Fatal("a load is in flight after Finish")
	}
}
