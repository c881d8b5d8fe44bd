package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	groupcache "github.com/golang/groupcache"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/maypok86/otter/v2"
)

// The hit-ratio simulator: every system sees the same key sequence, made
// from a fixed seed, with a budget of ratioBudget entries (every entry is
// ratioEntryBytes of key plus value, so a byte budget and an entry budget
// agree), and counts how many requests it answers without a load.

const (
	ratioEntryBytes = 64
	ratioKeyLen     = 10 // "k" and 9 digits
)

// A ratioTrace is a named sequence of key numbers.
type ratioTrace struct {
	name string
	keys []uint32
}

// ratioTraces returns the traces for a budget of budget entries:
//   - zipf-0.8, zipf-1.0, zipf-1.2: 100*budget requests over 10*budget keys
//     whose popularity follows a zipf law of that exponent;
//   - scan: a hot set of budget/2 keys read uniformly, interrupted after every
//     2*budget reads by a scan of 2*budget keys never seen before;
//   - loop: keys 0 .. 1.1*budget-1 read in order, over and over.
func ratioTraces(budget int) []ratioTrace {
	n := 100 * budget
	return []ratioTrace{
		{"zipf-0.8", zipfTrace(11, 10*budget, 0.8, n)},
		{"zipf-1.0", zipfTrace(12, 10*budget, 1.0, n)},
		{"zipf-1.2", zipfTrace(13, 10*budget, 1.2, n)},
		{"scan", scanTrace(14, budget/2, 2*budget, n)},
		{"loop", loopTrace(budget+budget/10, n)},
	}
}

// zipfTrace draws n keys from 0..keys-1, the key of popularity rank k
// (1-based) with probability proportional to k^-s. Ranks are shuffled onto
// key numbers so that popularity does not follow the key's order.
// (math/rand's Zipf needs s > 1, so this samples from the CDF.)
func zipfTrace(seed uint64, keys int, s float64, n int) []uint32 {
	r := rand.New(rand.NewPCG(seed, 1))
	cdf := make([]float64, keys)
	sum := 0.0
	for k := range keys {
		sum += math.Pow(float64(k+1), -s)
		cdf[k] = sum
	}
	perm := r.Perm(keys)
	out := make([]uint32, n)
	for i := range out {
		rank := sort.SearchFloat64s(cdf, r.Float64()*sum)
		out[i] = uint32(perm[min(rank, keys-1)])
	}
	return out
}

// scanTrace alternates runs of `run` uniform reads of a hot set of hot keys
// with scans of `run` fresh keys.
func scanTrace(seed uint64, hot, run, n int) []uint32 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]uint32, 0, n)
	next := uint32(hot)
	for len(out) < n {
		for range run {
			out = append(out, uint32(r.IntN(hot)))
		}
		for range run {
			out = append(out, next)
			next++
		}
	}
	return out[:n]
}

// loopTrace reads keys 0..size-1 in order, n reads in all.
func loopTrace(size, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i % size)
	}
	return out
}

// ratioKeys turns key numbers into the strings every system is given.
func ratioKeys(t []uint32) []string {
	out := make([]string, len(t))
	for i, k := range t {
		out[i] = fmt.Sprintf("k%09d", k)
	}
	return out
}

// ratioValue is every entry's value: key plus value make ratioEntryBytes.
var ratioValue = make([]byte, ratioEntryBytes-ratioKeyLen)

// A ratioSystem returns the fraction of keys it answered from its cache,
// given a budget of budget entries.
type ratioSystem struct {
	name string
	run  func(tb testing.TB, budget int, keys []string) float64
}

var ratioSystems = []ratioSystem{
	{"geecache", ratioGeeCache},
	{"otter", ratioOtter},
	{"lru", ratioLRU},
	{"groupcache", ratioGroupcache},
}

// ratioGeeCache runs the trace through a cache.Group with a byte budget
// and a Getter that counts its calls: the loads a user's source would see.
func ratioGeeCache(tb testing.TB, budget int, keys []string) float64 {
	loads := 0
	g, err := cache.NewRegistry().NewGroup("ratio", int64(budget*ratioEntryBytes), getter.Func(
		func(context.Context, string) ([]byte, error) { loads++; return ratioValue, nil }), nil)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range keys {
		if _, err := g.Get(ctx, k); err != nil {
			tb.Fatal(err)
		}
	}
	return 1 - float64(loads)/float64(len(keys))
}

// ratioOtter is otter v2 bounded to budget entries, read-through by hand.
func ratioOtter(_ testing.TB, budget int, keys []string) float64 {
	c := otter.Must(&otter.Options[string, []byte]{MaximumSize: budget})
	defer c.StopAllGoroutines()
	hits := 0
	for _, k := range keys {
		if _, ok := c.GetIfPresent(k); ok {
			hits++
			continue
		}
		c.Set(k, ratioValue)
	}
	return float64(hits) / float64(len(keys))
}

// ratioLRU is exact LRU (golang-lru v2) bounded to budget entries.
func ratioLRU(tb testing.TB, budget int, keys []string) float64 {
	c, err := lru.New[string, []byte](budget)
	if err != nil {
		tb.Fatal(err)
	}
	hits := 0
	for _, k := range keys {
		if _, ok := c.Get(k); ok {
			hits++
			continue
		}
		c.Add(k, ratioValue)
	}
	return float64(hits) / float64(len(keys))
}

// ratioGroupcache is golang/groupcache's Group with the same byte budget
// and a counting Getter. Its groups live for the whole process, so each
// run takes a name no earlier run used.
func ratioGroupcache(tb testing.TB, budget int, keys []string) float64 {
	name := "ratio"
	for i := 0; groupcache.GetGroup(name) != nil; i++ {
		name = fmt.Sprint("ratio-", i)
	}
	loads := 0
	g := groupcache.NewGroup(name, int64(budget*ratioEntryBytes), groupcache.GetterFunc(
		func(_ context.Context, _ string, dest groupcache.Sink) error {
			loads++
			return dest.SetBytes(ratioValue)
		}))
	ctx := context.Background()
	var v groupcache.ByteView
	for _, k := range keys {
		if err := g.Get(ctx, k, groupcache.ByteViewSink(&v)); err != nil {
			tb.Fatal(err)
		}
	}
	return 1 - float64(loads)/float64(len(keys))
}

// ratioWorkload holds the traces of the benchmark, built once per process.
var ratioWorkload = sync.OnceValue(func() []namedKeys {
	var out []namedKeys
	for _, t := range ratioTraces(ratioBenchBudget) {
		out = append(out, namedKeys{t.name, ratioKeys(t.keys)})
	}
	return out
})

type namedKeys struct {
	name string
	keys []string
}

// ratioBenchBudget is the benchmark's budget in entries: 640 kB of keys
// and values; the zipf traces then have 100k keys and 1M requests.
const ratioBenchBudget = 10_000

// BenchmarkHitRatio replays each trace through each system and reports
// hit-% (requests answered without a load). The numbers depend only on the
// seeds, not on the machine; ns/op is the time to replay one trace.
// Run with -benchtime=1x.
func BenchmarkHitRatio(b *testing.B) {
	for _, t := range ratioWorkload() {
		for _, s := range ratioSystems {
			b.Run(t.name+"/"+s.name, func(b *testing.B) {
				var ratio float64
				for b.Loop() {
					ratio = s.run(b, ratioBenchBudget, t.keys)
				}
				b.ReportMetric(100*ratio, "hit-%")
			})
		}
	}
}

// TestHitRatio replays smaller traces (a budget of 1,000 entries; 200
// under the race detector) through every system, logs the table (see it
// with -v), and checks the deterministic goals: on the scan and
// loop traces GeeCache answers at least as many requests from memory as
// exact LRU.
func TestHitRatio(t *testing.T) {
	budget := 1000
	if raceEnabled {
		budget = 200
	}
	for _, tr := range ratioTraces(budget) {
		keys := ratioKeys(tr.keys)
		got := map[string]float64{}
		line := tr.name
		for _, s := range ratioSystems {
			got[s.name] = s.run(t, budget, keys)
			line += fmt.Sprintf("  %s %.2f%%", s.name, 100*got[s.name])
		}
		t.Log(line)
		if slices.Contains([]string{"scan", "loop"}, tr.name) && got["geecache"] < got["lru"] {
			t.Errorf("%s: geecache hit ratio %.4f < exact LRU's %.4f", tr.name, got["geecache"], got["lru"])
		}
	}
}
