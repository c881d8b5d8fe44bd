package fair_test

import (
	"fmt"
	"strings"

	"github.com/geecache/geecache/bench/internal/fair"
)

// Compare two ways of building a string, each in 5 blocks of 1000
// operations, alternating. In a benchmark, fair.Run(b, opts, systems...)
// does the same with b.N operations per block and reports the metrics.
func Example() {
	var sink string
	concat := fair.System{Name: "concat", Run: func(n int) fair.Metrics {
		for range n {
			sink = "key-" + fmt.Sprint(n)
		}
		return nil
	}}
	builder := fair.System{Name: "builder", Run: func(n int) fair.Metrics {
		for range n {
			var sb strings.Builder
			sb.WriteString("key-")
			fmt.Fprint(&sb, n)
			sink = sb.String()
		}
		return nil
	}}
	rep, err := fair.Compare(fair.Options{Baseline: "concat", Mem: true}, 1000, concat, builder)
	if err != nil {
		panic(err)
	}
	lo, med := rep.Ratio("builder", "ns/op")
	fmt.Println(rep.Rounds, "rounds of", rep.Ops, "ops;", sink)
	fmt.Println("ratios measured:", lo > 0 && lo <= med)
	// Output:
	// 5 rounds of 1000 ops; key-1000
	// ratios measured: true
}
