package main

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// side is one of the two trees compared.
type side int

const (
	oldSide side = iota // the reference commit (-ref)
	newSide             // today's tree
)

func (s side) String() string {
	if s == oldSide {
		return "old"
	}
	return "new"
}

// roundOrder is the order the two sides run in round r (counted from 0):
// old then new in even rounds, new then old in odd ones, so that each side
// goes first equally often and neither always runs on a machine the other
// has just warmed (or heated).
func roundOrder(r int) [2]side {
	if r%2 == 0 {
		return [2]side{oldSide, newSide}
	}
	return [2]side{newSide, oldSide}
}

// median returns the median of xs (the mean of the middle two for an even
// count), or NaN for none. xs is not modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// minOf returns the smallest of xs, or NaN for none.
func minOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Min(xs)
}

// samples holds, for one benchmark, each round's metrics per side (nil
// where the benchmark gave no result in that round).
type samples struct {
	family  string
	seq     int // the order the benchmark was first seen in
	byRound [2][]map[string]float64
}

// collection gathers the results of every block of a run, by benchmark.
type collection struct {
	rounds int
	bench  map[string]*samples // by family + " " + full benchmark name
}

func newCollection(rounds int) *collection {
	return &collection{rounds: rounds, bench: make(map[string]*samples)}
}

// add records the results of one block: side s, round r, of a family.
func (c *collection) add(family string, s side, r int, rs []result) {
	for _, res := range rs {
		key := family + " " + res.name
		sm := c.bench[key]
		if sm == nil {
			sm = &samples{family: family, seq: len(c.bench)}
			for i := range sm.byRound {
				sm.byRound[i] = make([]map[string]float64, c.rounds)
			}
			c.bench[key] = sm
		}
		sm.byRound[s][r] = res.metrics
	}
}

// row is the summary of one benchmark over the rounds.
type row struct {
	family, name string
	seq          int     // the order the benchmark was first seen in
	only         string  // "old" or "new" if the benchmark gave results on one side only
	pairs        int     // rounds with a result on both sides
	oldNs, newNs float64 // medians of ns/op over the rounds
	ratioMin     float64 // min over rounds of new ns/op ÷ old ns/op in the same round
	ratioMed     float64 // median of those ratios
	ratioMax     float64 // and their max
	oldB, newB   float64 // medians of B/op (NaN without -benchmem)
	oldA, newA   float64 // medians of allocs/op
	other        []otherMetric
	verdict      string // "" or why the benchmark is flagged
	regressed    bool
}

// otherMetric is a unit other than ns/op, B/op and allocs/op (MB/s, or a
// benchmark's own): medians of each side and the median per-round ratio.
type otherMetric struct {
	unit            string
	old, new, ratio float64
}

// sideMedian is the median of unit over the rounds in which side has it.
func sideMedian(rounds []map[string]float64, unit string) float64 {
	var xs []float64
	for _, m := range rounds {
		if v, ok := m[unit]; ok {
			xs = append(xs, v)
		}
	}
	return median(xs)
}

// ratios returns new ÷ old of unit for every round in which both sides have it.
func ratios(sm *samples, unit string) []float64 {
	var rs []float64
	for r := range sm.byRound[oldSide] {
		o, ok1 := sm.byRound[oldSide][r][unit]
		n, ok2 := sm.byRound[newSide][r][unit]
		if ok1 && ok2 && o > 0 {
			rs = append(rs, n/o)
		}
	}
	return rs
}

// rows summarizes the collection, sorted by family (in the order given)
// and then in the order the benchmarks were first seen. A time ratio's median above threshold is a regression, and so
// is a median allocation count above the old one by half an allocation and
// 2% or more (a median of an even count of rounds can fall half-way, and a
// benchmark of a thousand allocations can move by one).
func (c *collection) rows(families []string, threshold float64) []row {
	out := make([]row, 0, len(c.bench))
	for key, sm := range c.bench {
		r := row{family: sm.family, name: strings.TrimPrefix(key, sm.family+" "), seq: sm.seq}
		has := [2]bool{}
		units := map[string]bool{}
		for s := range sm.byRound {
			for _, m := range sm.byRound[s] {
				if m != nil {
					has[s] = true
					for u := range m {
						units[u] = true
					}
				}
			}
		}
		switch {
		case !has[newSide]:
			r.only = "old"
		case !has[oldSide]:
			r.only = "new"
		}
		rs := ratios(sm, "ns/op")
		r.pairs = len(rs)
		r.oldNs, r.newNs = sideMedian(sm.byRound[oldSide], "ns/op"), sideMedian(sm.byRound[newSide], "ns/op")
		r.ratioMin, r.ratioMed = minOf(rs), median(rs)
		if len(rs) > 0 {
			r.ratioMax = slices.Max(rs)
		}
		r.oldB, r.newB = sideMedian(sm.byRound[oldSide], "B/op"), sideMedian(sm.byRound[newSide], "B/op")
		r.oldA, r.newA = sideMedian(sm.byRound[oldSide], "allocs/op"), sideMedian(sm.byRound[newSide], "allocs/op")
		for u := range units {
			if u == "ns/op" || u == "B/op" || u == "allocs/op" {
				continue
			}
			r.other = append(r.other, otherMetric{u,
				sideMedian(sm.byRound[oldSide], u), sideMedian(sm.byRound[newSide], u), median(ratios(sm, u))})
		}
		sort.Slice(r.other, func(i, j int) bool { return r.other[i].unit < r.other[j].unit })
		r.judge(threshold)
		out = append(out, r)
	}
	rank := func(f string) int {
		if i := slices.Index(families, f); i >= 0 {
			return i
		}
		return len(families)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := rank(out[i].family), rank(out[j].family); a != b {
			return a < b
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// judge sets the row's verdict.
func (r *row) judge(threshold float64) {
	var why []string
	if r.only != "" {
		r.verdict = "only in " + r.only + ": skipped"
		return
	}
	if r.pairs == 0 {
		r.verdict = "no round with both sides: skipped"
		return
	}
	switch {
	case r.ratioMed > threshold && r.ratioMin > 1:
		why = append(why, fmt.Sprintf("SLOWER (median > %.2f, every round)", threshold))
		r.regressed = true
	case r.ratioMed > threshold:
		why = append(why, fmt.Sprintf("SLOWER (median > %.2f)", threshold))
		r.regressed = true
	case r.ratioMed < 1/threshold && r.ratioMax < 1:
		why = append(why, "faster (every round)")
	case r.ratioMed < 1/threshold:
		why = append(why, "faster")
	}
	if d := r.newA - r.oldA; d >= max(0.5, 0.02*r.oldA) {
		why = append(why, "ALLOCS +"+trim(d))
		r.regressed = true
	}
	r.verdict = strings.Join(why, ", ")
}
