package fair

import (
	"slices"
	"strings"
	"testing"
)

func TestSchedule(t *testing.T) {
	got := Schedule(3, 3)
	want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1}
	if !slices.Equal(got, want) {
		t.Errorf("Schedule(3, 3) = %v, want %v", got, want)
	}
	if got := Schedule(4, 2); !slices.Equal(got, []int{0, 1, 1, 0, 0, 1, 1, 0}) {
		t.Errorf("Schedule(4, 2) = %v", got)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestCompareOrder checks that blocks alternate as Schedule says, that
// each block is prepared just before it runs with the same count, and
// that every system gets one sample per round.
func TestCompareOrder(t *testing.T) {
	var log []string
	sys := func(name string) System {
		return System{
			Name:    name,
			Prepare: func(n int) { log = append(log, "prep-"+name) },
			Run: func(n int) Metrics {
				log = append(log, name)
				if n != 7 {
					t.Errorf("%s: Run(%d), want 7", name, n)
				}
				return Metrics{"widgets/op": 2}
			},
		}
	}
	rep, err := Compare(Options{Baseline: "b", Rounds: 2, Mem: true, CPU: true}, 7, sys("a"), sys("b"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"prep-a", "a", "prep-b", "b", "prep-b", "b", "prep-a", "a"}
	if !slices.Equal(log, want) {
		t.Errorf("blocks ran as %v, want %v", log, want)
	}
	for _, s := range []string{"a", "b"} {
		for _, unit := range []string{"ns/op", "allocs/op", "B/op", "cpu-ns/op", "widgets/op"} {
			if n := len(rep.samples[s][unit]); n != 2 {
				t.Errorf("%s %s: %d samples, want 2", s, unit, n)
			}
		}
	}
	if got := rep.Median("a", "widgets/op"); got != 2 {
		t.Errorf("median widgets/op = %v, want 2", got)
	}
	if _, ok := rep.Metrics()["a/b-cpu-ns/op-med"]; !ok {
		t.Errorf("no CPU ratio among %v", rep.Metrics())
	}
}

func TestRatioAndMetrics(t *testing.T) {
	rep := &Report{
		Baseline: "base",
		Rounds:   3,
		Systems:  []string{"base", "x"},
		ratioOf:  []string{"ns/op", "p50-ns"},
		samples: map[string]map[string][]float64{
			"base": {"ns/op": {10, 20, 40}, "p50-ns": {1, 1, 1}},
			"x":    {"ns/op": {30, 20, 60}, "p50-ns": {2, 3, 4}},
		},
		LoadStart: 0.5, LoadEnd: 1.5, CPUs: 2,
	}
	// Per-round ratios of x: 3, 1, 1.5.
	if lo, med := rep.Ratio("x", "ns/op"); lo != 1 || med != 1.5 {
		t.Errorf("Ratio = %v, %v; want 1, 1.5", lo, med)
	}
	m := rep.Metrics()
	want := Metrics{
		"cpus": 2, "load-start": 0.5, "load-end": 1.5,
		"base-ns/op": 20, "base-p50-ns": 1,
		"x-ns/op": 30, "x-p50-ns": 3,
		"x/base-min": 1, "x/base-med": 1.5,
		"x/base-p50-ns-min": 2, "x/base-p50-ns-med": 3,
	}
	if len(m) != len(want) {
		t.Errorf("Metrics has %d entries, want %d: %v", len(m), len(want), m)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("Metrics[%q] = %v, want %v", k, m[k], v)
		}
	}
}

func TestCompareRejects(t *testing.T) {
	run := func(int) Metrics { return nil }
	for _, c := range []struct {
		name string
		opts Options
		n    int
		sys  []System
	}{
		{"no baseline", Options{Baseline: "z"}, 1, []System{{Name: "a", Run: run}}},
		{"zero ops", Options{Baseline: "a"}, 0, []System{{Name: "a", Run: run}}},
		{"space in name", Options{Baseline: "a b"}, 1, []System{{Name: "a b", Run: run}}},
		{"twice", Options{Baseline: "a"}, 1, []System{{Name: "a", Run: run}, {Name: "a", Run: run}}},
		{"no Run", Options{Baseline: "a"}, 1, []System{{Name: "a"}}},
		{"negative rounds", Options{Baseline: "a", Rounds: -1}, 1, []System{{Name: "a", Run: run}}},
	} {
		if _, err := Compare(c.opts, c.n, c.sys...); err == nil || !strings.HasPrefix(err.Error(), "fair: ") {
			t.Errorf("%s: err = %v, want a fair: error", c.name, err)
		}
	}
}

func TestParallel(t *testing.T) {
	for _, n := range []int{0, 1, 5, 1000} {
		counts := make([]int, 64)
		Parallel(n, func(w, ops int) { counts[w] = ops })
		total := 0
		for _, c := range counts {
			total += c
		}
		if total != n {
			t.Errorf("Parallel(%d): workers ran %d ops in all", n, total)
		}
	}
}
