package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// printRows prints the summary table: per benchmark the median ns/op of
// each side, the min and median of the per-round ratios new ÷ old, the
// median B/op and allocs/op of each side, other metrics, and the verdict.
func printRows(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "family\tbenchmark\told ns/op\tnew ns/op\tnew/old min\tmed\tB/op old→new\tallocs/op old→new\tother (old→new, med ratio)\tverdict")
	for _, r := range rows {
		var other []string
		for _, m := range r.other {
			other = append(other, fmt.Sprintf("%s %s→%s ×%s", m.unit, num(m.old), num(m.new), ratio(m.ratio)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s→%s\t%s→%s\t%s\t%s\n", r.family, r.name,
			num(r.oldNs), num(r.newNs), ratio(r.ratioMin), ratio(r.ratioMed),
			trim(r.oldB), trim(r.newB), trim(r.oldA), trim(r.newA), strings.Join(other, "; "), r.verdict)
	}
	tw.Flush()
}

// num formats a measurement with three or four significant digits.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// ratio formats a ratio with three decimals.
func ratio(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// trim formats a count: whole numbers without decimals, others with up
// to two.
func trim(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}
