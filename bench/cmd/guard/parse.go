package main

import (
	"strconv"
	"strings"
)

// result is one line of benchmark output: the benchmark's full name (with
// its -GOMAXPROCS suffix, as the testing package prints it), its iteration
// count and its metrics by unit ("ns/op", "B/op", "allocs/op", "MB/s", or a
// unit the benchmark reported itself).
type result struct {
	name    string
	n       int64
	metrics map[string]float64
}

// parseOutput reads the results out of a test binary's benchmark output.
// A result line is the name, the iteration count and value-unit pairs. A
// benchmark that logs can have its name printed on a line of its own and
// its numbers on a later line; such a pair is joined. It also returns the
// names of benchmarks reported as failed ("--- FAIL: name").
func parseOutput(out string) (results []result, failed []string) {
	pending := "" // a name printed without its numbers
	for line := range strings.Lines(out) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) >= 3 && fields[0] == "---" && fields[1] == "FAIL:" {
			failed = append(failed, fields[2])
			continue
		}
		if strings.HasPrefix(fields[0], "Benchmark") {
			if r, ok := parseNumbers(fields[0], fields[1:]); ok {
				results = append(results, r)
				pending = ""
			} else if len(fields) == 1 {
				pending = fields[0]
			}
			continue
		}
		if pending != "" {
			if r, ok := parseNumbers(pending, fields); ok {
				results = append(results, r)
				pending = ""
			}
		}
	}
	return results, failed
}

// parseNumbers parses "N v1 unit1 v2 unit2 ..." for the benchmark name.
func parseNumbers(name string, f []string) (result, bool) {
	if len(f) < 3 || len(f)%2 != 1 {
		return result{}, false
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n <= 0 {
		return result{}, false
	}
	r := result{name: name, n: n, metrics: make(map[string]float64, len(f)/2)}
	for i := 1; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return result{}, false
		}
		r.metrics[f[i+1]] = v
	}
	return r, true
}

// splitBench splits a -test.bench pattern at its top-level slashes, as the
// testing package does (a slash inside brackets or parentheses does not
// split): "^BenchmarkA$/serial" gives "^BenchmarkA$" and "serial".
func splitBench(pattern string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case '/':
			if depth == 0 {
				parts = append(parts, pattern[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, pattern[start:])
}
