package history

import (
	"testing"
	"time"
)

func w(v string, start, end time.Duration, acked bool) Op {
	return Op{What: "set", Key: "k", Value: v, Start: start, End: end, Write: true, Acked: acked}
}

func r(v string, start, end time.Duration) Op {
	return Op{What: "get", Key: "k", Value: v, Start: start, End: end, OK: true}
}

func TestCheck(t *testing.T) {
	src := Initial("k")
	for _, c := range []struct {
		name       string
		ops        []Op
		violations int
	}{
		{"the source's value before any write", []Op{r(src, 1, 2)}, 0},
		{"a value no write wrote", []Op{r("x", 1, 2)}, 1},
		{"the source's value after an acknowledged write", []Op{w("a", 1, 2, true), r(src, 3, 4)}, 1},
		{"the source's value during a write", []Op{w("a", 1, 5, true), r(src, 3, 4)}, 0},
		{"a write's value before it began", []Op{r("a", 1, 2), w("a", 3, 4, true)}, 1},
		{"a write's value while it runs", []Op{w("a", 1, 5, true), r("a", 2, 3)}, 0},
		{"a read that overlaps the write", []Op{w("a", 2, 5, true), r("a", 1, 3)}, 0},
		{"the older of two writes in a row", []Op{w("a", 1, 2, true), w("b", 3, 4, true), r("a", 5, 6)}, 1},
		{"the older of two overlapping writes", []Op{w("a", 1, 4, true), w("b", 3, 6, true), r("a", 7, 8)}, 0},
		{"the newer of two writes", []Op{w("a", 1, 2, true), w("b", 3, 4, true), r("b", 5, 6)}, 0},
		{"a read that began before the newer write ended", []Op{w("a", 1, 2, true), w("b", 3, 6, true), r("a", 5, 7)}, 0},
		{"an old value after a failed write", []Op{w("a", 1, 2, true), w("b", 3, 4, false), r("a", 5, 6)}, 0},
		{"a failed write's value long after", []Op{w("b", 1, 2, false), w("a", 3, 4, true), r("b", 5, 6)}, 0},
		{"missing after a delete", []Op{w(Missing, 1, 2, true), r(Missing, 3, 4)}, 0},
		{"missing before any delete", []Op{r(Missing, 3, 4)}, 1},
		{"one of two writes of the same value still current", []Op{w("a", 1, 2, true), w("b", 3, 4, true), w("a", 5, 6, true), r("a", 7, 8)}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := Check(c.ops)
			if len(rep.Violations) != c.violations {
				t.Fatalf("%v; want %d violations\n%s", rep, c.violations, rep.Detail(10))
			}
			if rep.Reads == 0 {
				t.Fatal("no read checked")
			}
		})
	}
}
