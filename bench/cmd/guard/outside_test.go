package main

import (
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// Result lines as the bench module's comparisons print them (cut to the
// metrics around the ones read, in the testing package's sorted order),
// with a log line between two of them, and a line that lacks our ratio.
const outsideOutput = `goos: linux
pkg: github.com/geecache/geecache/bench
BenchmarkMiss/serial-2         	       1	2092896845 ns/op	         4.001 geecache-allocs/get	      2061 geecache-ns/get	         2.199 geecache/groupcache-med	         0.5393 geecache/groupcache-min	        11.00 groupcache-allocs/get	       993.0 groupcache-ns/get	         1.083 otter/groupcache-med
2026/12/01 10:00:00 INFO a log line
BenchmarkMiss/parallel-2       	       1	3840997514 ns/op	      1751 geecache-ns/get	         1.497 geecache/groupcache-med	         0.3791 geecache/groupcache-min	      1299 groupcache-ns/get
BenchmarkMiss/lacking-2        	       1	3840997514 ns/op	      1751 geecache-ns/get	      1299 groupcache-ns/get
PASS
`

const remoteOutput = `BenchmarkRemoteFetch/c1-2         	    1000	     25718 bare-nethttp-p50-ns	    195353 bare-nethttp-p99-ns	     48542 geecache-p50-ns	         1.625 geecache/bare-nethttp-med	         1.062 geecache/bare-nethttp-min	         1.529 geecache/bare-nethttp-p50-ns-med	         1.388 geecache/bare-nethttp-p50-ns-min	    137406 groupcache-p50-ns
`

func TestOutsideRows(t *testing.T) {
	checks := outsideChecks()
	miss, remote := checks[slices.IndexFunc(checks, func(c outsideCheck) bool { return c.family == "miss" })],
		checks[slices.IndexFunc(checks, func(c outsideCheck) bool { return c.family == "remote" })]
	type want struct {
		name                string
		ours, ref, min, med float64
		missing             []string
	}
	nan := math.NaN()
	for _, c := range []struct {
		check outsideCheck
		out   string
		want  []want
	}{
		{miss, outsideOutput, []want{
			{"BenchmarkMiss/serial-2", 2061, 993, 0.5393, 2.199, nil},
			{"BenchmarkMiss/parallel-2", 1751, 1299, 0.3791, 1.497, nil},
			{"BenchmarkMiss/lacking-2", 1751, 1299, nan, nan, []string{"geecache/groupcache-min", "geecache/groupcache-med"}},
		}},
		// The ns/op ratio (geecache/bare-nethttp-med) must not be taken for the p50 one.
		{remote, remoteOutput, []want{{"BenchmarkRemoteFetch/c1-2", 48542, 25718, 1.388, 1.529, nil}}},
		{remote, "PASS\n", nil},
	} {
		got := outsideRows(c.check, c.out)
		if len(got) != len(c.want) {
			t.Fatalf("%s: got %d rows, want %d: %+v", c.check.family, len(got), len(c.want), got)
		}
		same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
		for i, w := range c.want {
			g := got[i]
			if g.family != c.check.family || g.name != w.name || !same(g.ours, w.ours) || !same(g.ref, w.ref) ||
				!same(g.ratioMin, w.min) || !same(g.ratioMed, w.med) || !slices.Equal(g.missing, w.missing) {
				t.Errorf("%s row %d = %+v, want %+v", c.check.family, i, g, w)
			}
		}
	}
}

// The table names the metrics it read and those it did not find.
func TestPrintOutside(t *testing.T) {
	var checks []outsideCheck
	for _, c := range outsideChecks() {
		if c.family == "miss" {
			checks = append(checks, c)
		}
	}
	var b strings.Builder
	printOutside(&b, outsideRows(checks[0], outsideOutput))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want a header and 3 rows:\n%s", len(lines), b.String())
	}
	for i, want := range [][]string{
		{"family", "benchmark", "ours", "reference", "ours/ref", "min", "med", "metrics", "read"},
		{"miss", "BenchmarkMiss/serial-2", "2061", "993.0", "0.539", "2.199",
			"geecache-ns/get,", "groupcache-ns/get,", "geecache/groupcache-{min,med}"},
		{"miss", "BenchmarkMiss/parallel-2", "1751", "1299", "0.379", "1.497",
			"geecache-ns/get,", "groupcache-ns/get,", "geecache/groupcache-{min,med}"},
		{"miss", "BenchmarkMiss/lacking-2", "1751", "1299", "-", "-",
			"geecache-ns/get,", "groupcache-ns/get,", "geecache/groupcache-{min,med}",
			"(missing:", "geecache/groupcache-min", "geecache/groupcache-med)"},
	} {
		if got := strings.Fields(lines[i]); !slices.Equal(got, want) {
			t.Errorf("line %d = %q, want fields %q", i, lines[i], want)
		}
	}
}

// Each check belongs to a known family, and -families picks the checks.
func TestOutsideFor(t *testing.T) {
	for _, c := range outsideChecks() {
		if !slices.ContainsFunc(knownFamilies(), func(f family) bool { return f.name == c.family }) {
			t.Errorf("check of unknown family %q", c.family)
		}
	}
	for spec, want := range map[string][]string{
		"hit,miss,remote,ring":   {"hit", "miss", "remote", "ring"},
		"miss":                   {"miss"},
		"ring,./cache:^BenchX$":  {"ring"},
		"./cache:^BenchmarkGet$": nil,
	} {
		fams, err := parseFamilies(spec)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range outsideFor(fams) {
			got = append(got, c.family)
		}
		if !slices.Equal(got, want) {
			t.Errorf("outsideFor(%q) = %q, want %q", spec, got, want)
		}
	}
}

func TestOutsideFlag(t *testing.T) {
	for args, want := range map[string]bool{"": true, "-outside=false": false, "-short": true} {
		cfg, err := parseFlags(strings.Fields(args), io.Discard)
		if err != nil || cfg.outside != want {
			t.Errorf("parseFlags(%q): outside = %v, %v; want %v", args, cfg.outside, err, want)
		}
	}
}
