package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestMedianAndMin(t *testing.T) {
	for _, c := range []struct {
		xs       []float64
		med, min float64
	}{
		{[]float64{3}, 3, 3},
		{[]float64{5, 1, 3}, 3, 1},
		{[]float64{4, 1, 3, 2}, 2.5, 1},
		{[]float64{2, 2, 9, 2, 9}, 2, 2},
	} {
		in := slices.Clone(c.xs)
		if got := median(c.xs); got != c.med {
			t.Errorf("median(%v) = %v, want %v", in, got, c.med)
		}
		if got := minOf(c.xs); got != c.min {
			t.Errorf("minOf(%v) = %v, want %v", in, got, c.min)
		}
		if !slices.Equal(c.xs, in) {
			t.Errorf("median sorted its input: %v, was %v", c.xs, in)
		}
	}
	if !math.IsNaN(median(nil)) || !math.IsNaN(minOf(nil)) {
		t.Error("median and minOf of nothing must be NaN")
	}
}

func TestRoundOrderAlternates(t *testing.T) {
	first := map[side]int{}
	for r := range 6 {
		o := roundOrder(r)
		if o[0] == o[1] {
			t.Fatalf("round %d runs %s twice", r, o[0])
		}
		if r > 0 && o == roundOrder(r-1) {
			t.Errorf("rounds %d and %d run in the same order %v", r-1, r, o)
		}
		first[o[0]]++
	}
	if first[oldSide] != 3 || first[newSide] != 3 {
		t.Errorf("over 6 rounds old went first %d times, new %d: want 3 each", first[oldSide], first[newSide])
	}
}

// fakeRuns answers each block from a table of ns/op by side and round, and
// records the order the blocks ran in.
type fakeRuns struct {
	calls []string
	ns    map[string][2][]float64 // benchmark name → ns/op per side, per round
	fail  string                  // "side round" of a block that fails
}

func (f *fakeRuns) run(_ context.Context, s side, fam family, r int) ([]result, error) {
	f.calls = append(f.calls, fmt.Sprintf("%d %s %s", r, fam.name, s))
	if f.fail == fmt.Sprintf("%s %d", s, r) {
		return nil, errors.New("exit status 1")
	}
	var out []result
	for _, name := range slices.Sorted(maps.Keys(f.ns)) {
		v := f.ns[name]
		if !strings.HasPrefix(name, fam.name+"/") || v[s] == nil {
			continue
		}
		out = append(out, result{name, 1000, map[string]float64{
			"ns/op": v[s][r], "B/op": 64, "allocs/op": float64(1 + int(s)), "MB/s": 1000 / v[s][r]}})
	}
	return out, nil
}

func TestRunRoundsAlternatesAndPairsRounds(t *testing.T) {
	f := &fakeRuns{ns: map[string][2][]float64{
		// Ratios by round 1.1, 0.9, 1.1: min 0.9, median 1.1. The
		// ratio of the medians (220/200) would also be 1.1, but the min
		// over rounds is only right if rounds are paired.
		"hit/a": {{100, 200, 400}, {110, 180, 440}},
		"hit/b": {{10, 10, 10}, nil}, // the new tree lacks it
	}}
	fams := []family{{name: "hit"}, {name: "miss"}}
	c, failed := runRounds(context.Background(), 3, fams, f.run, io.Discard, func() string { return "0" })
	if failed != 0 {
		t.Errorf("failed = %d, want 0", failed)
	}
	want := []string{
		"0 hit old", "0 hit new", "0 miss old", "0 miss new",
		"1 hit new", "1 hit old", "1 miss new", "1 miss old",
		"2 hit old", "2 hit new", "2 miss old", "2 miss new",
	}
	if !slices.Equal(f.calls, want) {
		t.Errorf("blocks ran in the order\n%q\nwant\n%q", f.calls, want)
	}
	rows := c.rows([]string{"hit", "miss"}, 1.05)
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2: %+v", len(rows), rows)
	}
	a, b := rows[0], rows[1]
	if a.name != "hit/a" || a.oldNs != 200 || a.newNs != 180 || a.pairs != 3 ||
		math.Abs(a.ratioMin-0.9) > 1e-9 || math.Abs(a.ratioMed-1.1) > 1e-9 {
		t.Errorf("row a = %+v, want old 200, new 180, ratio min 0.9, median 1.1 over 3 rounds", a)
	}
	if a.oldA != 1 || a.newA != 2 || a.oldB != 64 || !a.regressed ||
		!strings.Contains(a.verdict, "SLOWER") || !strings.Contains(a.verdict, "ALLOCS +1") {
		t.Errorf("row a: allocs %v→%v, verdict %q, regressed %v: want 1→2, SLOWER and ALLOCS +1", a.oldA, a.newA, a.verdict, a.regressed)
	}
	if len(a.other) != 1 || a.other[0].unit != "MB/s" || a.other[0].old != 5 {
		t.Errorf("row a other metrics = %+v, want MB/s with old median 5", a.other)
	}
	if b.name != "hit/b" || b.only != "old" || b.regressed || !strings.Contains(b.verdict, "only in old") {
		t.Errorf("row b = %+v, want only in old, not a regression", b)
	}
}

func TestRunRoundsGoesOnAfterAFailedBlock(t *testing.T) {
	f := &fakeRuns{ns: map[string][2][]float64{"hit/a": {{100, 100, 100}, {100, 100, 100}}}, fail: "new 1"}
	var log strings.Builder
	c, failed := runRounds(context.Background(), 3, []family{{name: "hit", pattern: "^B$"}}, f.run, &log, func() string { return "1.5" })
	if failed != 1 || len(f.calls) != 6 {
		t.Errorf("failed = %d after %d blocks, want 1 after 6", failed, len(f.calls))
	}
	if !strings.Contains(log.String(), "hit ^B$ new: exit status 1") || !strings.Contains(log.String(), "load 1.5") {
		t.Errorf("log does not name the failed block or the load:\n%s", log.String())
	}
	if r := c.rows([]string{"hit"}, 1.05)[0]; r.pairs != 2 || r.ratioMed != 1 {
		t.Errorf("row = %+v, want 2 paired rounds at ratio 1", r)
	}
}

func TestRunRoundsStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	run := func(context.Context, side, family, int) ([]result, error) {
		calls++
		cancel()
		return nil, nil
	}
	runRounds(ctx, 5, []family{{name: "hit"}}, run, io.Discard, func() string { return "" })
	if calls != 1 {
		t.Errorf("ran %d blocks after the context was cancelled in the first, want 1", calls)
	}
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name       string
		r          row
		regressed  bool
		verdictHas string
	}{
		{"within threshold", row{pairs: 5, ratioMin: 0.9, ratioMed: 1.04, ratioMax: 1.1, oldA: 3, newA: 3}, false, ""},
		{"slower", row{pairs: 5, ratioMin: 0.9, ratioMed: 1.06, ratioMax: 1.1, oldA: 3, newA: 3}, true, "SLOWER (median > 1.05)"},
		{"slower every round", row{pairs: 5, ratioMin: 1.01, ratioMed: 1.06, ratioMax: 1.1, oldA: 3, newA: 3}, true, "every round"},
		{"faster", row{pairs: 5, ratioMin: 0.8, ratioMed: 0.9, ratioMax: 1.1, oldA: 3, newA: 3}, false, "faster"},
		{"faster every round", row{pairs: 5, ratioMin: 0.8, ratioMed: 0.9, ratioMax: 0.99, oldA: 3, newA: 3}, false, "faster (every round)"},
		{"one more alloc", row{pairs: 5, ratioMed: 1, oldA: 3, newA: 4}, true, "ALLOCS +1"},
		{"half an alloc of a thousand", row{pairs: 5, ratioMed: 1, oldA: 1029, newA: 1029.5}, false, ""},
		{"fewer allocs", row{pairs: 5, ratioMed: 1, oldA: 4, newA: 3}, false, ""},
		{"no pairs", row{ratioMed: math.NaN()}, false, "skipped"},
	} {
		c.r.judge(1.05)
		if c.r.regressed != c.regressed || !strings.Contains(c.r.verdict, c.verdictHas) {
			t.Errorf("%s: regressed %v, verdict %q; want %v and %q", c.name, c.r.regressed, c.r.verdict, c.regressed, c.verdictHas)
		}
	}
}
