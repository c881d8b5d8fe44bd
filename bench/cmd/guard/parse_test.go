package main

import (
	"maps"
	"slices"
	"testing"
)

// A test binary's output as `-test.bench -test.benchmem` prints it: header
// lines, plain result lines, a throughput and a custom unit, a benchmark
// whose log split its name from its numbers, a failed benchmark, and the
// trailer.
const sampleOutput = `goos: linux
goarch: amd64
pkg: github.com/geecache/geecache/cache
cpu: AMD EPYC 7B13
BenchmarkGetHit/serial-2         	52148030	        23.12 ns/op	       0 B/op	       0 allocs/op
BenchmarkGetMiss/background/parallel-2   	 1000000	      1093 ns/op	     296 B/op	       6 allocs/op
BenchmarkRemoteGet/1MiB-2        	    2048	    612345 ns/op	1712.34 MB/s	 1060000 B/op	      98 allocs/op
BenchmarkCustom-2   	     100	       500.5 ns/op	        42.0 p50-ns	      16 B/op	       1 allocs/op
BenchmarkLogs-2
2026/12/01 10:00:00 INFO a log line the benchmark wrote
     300	      7000 ns/op	      64 B/op	       2 allocs/op
--- FAIL: BenchmarkBroken-2
    bench_test.go:12: boom
BenchmarkSpeed is not a result line
FAIL
exit status 1
`

func TestParseOutput(t *testing.T) {
	got, failed := parseOutput(sampleOutput)
	want := []result{
		{"BenchmarkGetHit/serial-2", 52148030, map[string]float64{"ns/op": 23.12, "B/op": 0, "allocs/op": 0}},
		{"BenchmarkGetMiss/background/parallel-2", 1000000, map[string]float64{"ns/op": 1093, "B/op": 296, "allocs/op": 6}},
		{"BenchmarkRemoteGet/1MiB-2", 2048, map[string]float64{"ns/op": 612345, "MB/s": 1712.34, "B/op": 1060000, "allocs/op": 98}},
		{"BenchmarkCustom-2", 100, map[string]float64{"ns/op": 500.5, "p50-ns": 42, "B/op": 16, "allocs/op": 1}},
		{"BenchmarkLogs-2", 300, map[string]float64{"ns/op": 7000, "B/op": 64, "allocs/op": 2}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].name != want[i].name || got[i].n != want[i].n || !maps.Equal(got[i].metrics, want[i].metrics) {
			t.Errorf("result %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if !slices.Equal(failed, []string{"BenchmarkBroken-2"}) {
		t.Errorf("failed = %q, want [BenchmarkBroken-2]", failed)
	}
}

func TestParseOutputRejectsMalformedLines(t *testing.T) {
	for _, line := range []string{
		"BenchmarkA-2 100 12 ns/op 3",     // a value without its unit
		"BenchmarkA-2 100 twelve ns/op",   // not a number
		"BenchmarkA-2 0 12 ns/op",         // no iterations
		"BenchmarkA-2 -5 12 ns/op",        // negative iterations
		"BenchmarkA-2 100",                // no metric
		"ok  github.com/x 1.2s",           // not a benchmark line
		"Benchmark results follow: 1 2 3", // prose
	} {
		if got, _ := parseOutput(line + "\n"); len(got) != 0 {
			t.Errorf("parseOutput(%q) = %+v, want no result", line, got)
		}
	}
}

func TestSplitBench(t *testing.T) {
	for pattern, want := range map[string][]string{
		"^BenchmarkGetHit$":             {"^BenchmarkGetHit$"},
		"^BenchmarkGetMiss$/background": {"^BenchmarkGetMiss$", "background"},
		"^(BenchmarkA|BenchmarkB)$/x/y": {"^(BenchmarkA|BenchmarkB)$", "x", "y"},
		"^BenchmarkA$/(a/b|c)":          {"^BenchmarkA$", "(a/b|c)"},
		"^BenchmarkA$/[/]x":             {"^BenchmarkA$", "[/]x"},
		`^BenchmarkA$/a\/b`:             {"^BenchmarkA$", `a\/b`},
		"RemoteFetch/^c":                {"RemoteFetch", "^c"},
	} {
		if got := splitBench(pattern); !slices.Equal(got, want) {
			t.Errorf("splitBench(%q) = %q, want %q", pattern, got, want)
		}
	}
}
