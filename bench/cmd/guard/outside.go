package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// outsideCheck is a family's comparison with its outside reference: a
// benchmark of the bench module that runs our system and the reference in
// one process, in alternating blocks, and reports both and their ratios as
// metrics. A small step each commit never shows against the previous
// commit; against the reference, the steps add up.
type outsideCheck struct {
	family    string
	pattern   string // -test.bench
	benchtime string // -test.benchtime: short, the section must stay cheap
	ours, ref string // the units of our figure and of the reference's
	ratio     string // the ratios ours ÷ reference are ratio+"-min" and ratio+"-med"
}

// outsideChecks are the checks of the known families.
func outsideChecks() []outsideCheck {
	return []outsideCheck{
		{"hit", "^BenchmarkHit$/^keys=100k$", "200000x",
			"geecache-ns/op", "otter-ns/op", "geecache/otter"},
		{"miss", "^BenchmarkMiss$", "1x", // one iteration is the whole comparison
			"geecache-ns/get", "groupcache-ns/get", "geecache/groupcache"},
		{"remote", "^BenchmarkRemoteFetch$/^c1$", "1000x",
			"geecache-p50-ns", "bare-nethttp-p50-ns", "geecache/bare-nethttp-p50-ns"},
		{"ring", "^BenchmarkRingLookup1M$/^nodes=100$", "1048576x", // one pass over the keys
			"geecache-r1024-ns/op", "groupcache-r50-ns/op", "geecache-r1024/groupcache-r50"},
	}
}

// outsideFor returns the checks of the families in fams, in their order.
func outsideFor(fams []family) []outsideCheck {
	var out []outsideCheck
	for _, c := range outsideChecks() {
		if slices.ContainsFunc(fams, func(f family) bool { return f.name == c.family }) {
			out = append(out, c)
		}
	}
	return out
}

// outsideRow is one benchmark's line of the outside table; a metric the
// output lacked is NaN and named in missing.
type outsideRow struct {
	family, name       string
	ours, ref          float64
	ratioMin, ratioMed float64
	check              outsideCheck
	missing            []string
}

// outsideRows reads check c's rows out of a test binary's output: one per
// result line.
func outsideRows(c outsideCheck, out string) []outsideRow {
	res, _ := parseOutput(out)
	var rows []outsideRow
	for _, r := range res {
		row := outsideRow{family: c.family, name: r.name, check: c}
		get := func(unit string) float64 {
			v, ok := r.metrics[unit]
			if !ok {
				row.missing = append(row.missing, unit)
				return math.NaN()
			}
			return v
		}
		row.ours, row.ref = get(c.ours), get(c.ref)
		row.ratioMin, row.ratioMed = get(c.ratio+"-min"), get(c.ratio+"-med")
		rows = append(rows, row)
	}
	return rows
}

// printOutside prints the outside table.
func printOutside(w io.Writer, rows []outsideRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "family\tbenchmark\tours\treference\tours/ref min\tmed\tmetrics read")
	for _, r := range rows {
		read := fmt.Sprintf("%s, %s, %s-{min,med}", r.check.ours, r.check.ref, r.check.ratio)
		if len(r.missing) > 0 {
			read += " (missing: " + strings.Join(r.missing, " ") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.family, r.name,
			num(r.ours), num(r.ref), ratio(r.ratioMin), ratio(r.ratioMed), read)
	}
	tw.Flush()
}

// outside builds the bench module's test binary in the working tree
// (root/bench) into dir, runs each check once and prints the table. It
// measures only the working tree: the reference runs in the same process.
func outside(ctx context.Context, w io.Writer, cfg config, root, dir string, checks []outsideCheck) {
	if len(checks) == 0 {
		return
	}
	benchDir := filepath.Join(root, "bench")
	fmt.Fprintf(w, "\noutside references: the working tree only, each check one short run (ours ÷ reference; above 1: ours is slower)\n")
	if _, err := os.Stat(filepath.Join(benchDir, "go.mod")); err != nil {
		fmt.Fprintf(w, "note: no bench module at %s: skipped\n", benchDir)
		return
	}
	bin := filepath.Join(dir, "new-bench-outside.test")
	if err := buildTest(ctx, benchDir, ".", bin); err != nil {
		fmt.Fprintf(w, "note: the bench module does not build: skipped: %v\n", err)
		return
	}
	start := time.Now()
	var rows []outsideRow
	for _, c := range checks {
		out, err := runBinary(ctx, bin, benchDir, "-test.run=^$", "-test.bench="+c.pattern,
			"-test.benchtime="+c.benchtime, "-test.count=1", "-test.timeout="+cfg.timeout.String())
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			fmt.Fprintf(w, "note: %s: %v\n", c.family, err)
		}
		r := outsideRows(c, out)
		if len(r) == 0 {
			fmt.Fprintf(w, "note: %s: no result from -test.bench=%s\n", c.family, c.pattern)
		}
		rows = append(rows, r...)
	}
	fmt.Fprintf(w, "done in %s, load at end %s\n\n", time.Since(start).Round(time.Second), loadAvg())
	printOutside(w, rows)
}
