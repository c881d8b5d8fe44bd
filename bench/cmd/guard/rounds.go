package main

import (
	"context"
	"fmt"
	"io"
)

// blockRunner runs one block: the benchmarks of unit f (a family's
// package and a pattern; in the guard, one benchmark) on side s in round
// r, and returns their results. An error for one block is reported and the
// run goes on; the benchmark has no sample on that side in that round.
type blockRunner func(ctx context.Context, s side, f family, r int) ([]result, error)

// runRounds runs rounds rounds of every unit, each round both sides of a
// unit in roundOrder(r), one right after the other, then the next unit. It logs one line per round to
// w (with the machine's load average, from load) and returns the results
// and the number of blocks that failed.
func runRounds(ctx context.Context, rounds int, fams []family, run blockRunner, w io.Writer, load func() string) (*collection, int) {
	c := newCollection(rounds)
	failed := 0
	for r := range rounds {
		order := roundOrder(r)
		fmt.Fprintf(w, "round %d/%d (%s, %s), load %s\n", r+1, rounds, order[0], order[1], load())
		for _, f := range fams {
			for _, s := range order {
				if ctx.Err() != nil {
					return c, failed
				}
				res, err := run(ctx, s, f, r)
				if err != nil {
					failed++
					fmt.Fprintf(w, "  %s %s %s: %v\n", f.name, f.pattern, s, err)
				}
				c.add(f.name, s, r, res)
			}
		}
	}
	return c, failed
}
