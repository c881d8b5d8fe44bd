// Package fair runs the systems of a benchmark comparison side by side, in
// alternating blocks within one benchmark, so that every system sees the
// same machine load, and reports per system the median time per operation
// and its ratio to a baseline system (min and median over rounds).
//
// Systems run one after another (one sub-benchmark each) see different
// machine load on a shared machine; their ratios can move by 3x between
// runs. Here a comparison of systems A, B and C with R rounds runs the
// blocks A B C, B C A, C A B, ... (each round rotated by one, so every
// system goes first equally often), each block n operations of one system.
// A ratio is taken within one round, between blocks run close together,
// and the minimum and median ratio over the rounds are reported.
//
// In a benchmark, [Run] takes n from b.N: the testing framework picks b.N
// so that the whole comparison (R rounds of every system) fills -benchtime,
// and -benchtime=1000x fixes the block at 1000 operations. The framework's
// own ns/op would be the whole comparison's time divided by b.N and is
// suppressed; its B/op and allocs/op (with -benchmem) are likewise sums
// over every block of every system and are not to be read. The metrics to
// read are, for a system S and the baseline BASE:
//
//	S-ns/op           median over rounds of S's ns/op
//	S-allocs/op       median allocations per op (with Options.Mem)
//	S-B/op            median bytes allocated per op (with Options.Mem)
//	S-cpu-ns/op       median CPU time of the whole process per op (with Options.CPU)
//	S-UNIT            median of a unit S's Run reported itself
//	S/BASE-min        min over rounds of S's ns/op divided by BASE's in the same round
//	S/BASE-med        median of those ratios
//	S/BASE-UNIT-min   the same for a unit named in Options.Ratios (and cpu-ns/op)
//	S/BASE-UNIT-med
//	load-start        the machine's 1-minute load average when the comparison began
//	load-end          and when it ended (Linux only)
//	cpus              runtime.NumCPU
//
// A ratio above 1 means S takes longer than the baseline.
//
// Wall time is what a user sees, but on a machine that other jobs load it
// includes the time the benchmark waited for a CPU. The process's CPU time
// (Options.CPU) does not, so its ratios stay steadier under load; it
// counts every thread of the process (both ends of an in-process server,
// the garbage collector) and nothing of other processes.
package fair

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Metrics are per-operation values a system measured in one block, by unit
// (for example "p50-ns"). A unit must not contain white space.
type Metrics map[string]float64

// A System is one contestant of a comparison.
type System struct {
	// Name names the system in the reported metrics; it must not contain
	// white space.
	Name string
	// Prepare, if not nil, runs before each of the system's blocks,
	// outside the timed span, with the block's operation count (for
	// example to make n fresh keys).
	Prepare func(n int)
	// Run performs n operations; the block's time is Run's wall time.
	// It may return per-block metrics of its own (or nil), which are
	// reported as medians over rounds. A "ns/op" or "cpu-ns/op" it
	// returns replaces the harness's (for example to leave out its own
	// bookkeeping, or to add the CPU time of a child process).
	Run func(n int) Metrics
}

// Options configure a comparison.
type Options struct {
	// Baseline is the name of the system the others are compared with.
	Baseline string
	// Rounds is the number of blocks of each system; 0 means 5.
	Rounds int
	// Mem records allocations and bytes allocated per operation in each
	// block from runtime.MemStats (every goroutine of the process counts,
	// so an in-process server's allocations count too).
	Mem bool
	// GC runs a garbage collection before every block, outside the timed
	// span, so that no block pays for garbage that Prepare or another
	// system left behind.
	GC bool
	// CPU records the process's CPU time per operation in each block
	// ("cpu-ns/op", Unix only) and reports its ratios too.
	CPU bool
	// Ratios are the units whose ratio to the baseline is reported;
	// "ns/op" is always among them.
	Ratios []string
}

// DefaultRounds is the number of rounds when Options.Rounds is 0.
const DefaultRounds = 5

// A Report holds what a comparison measured.
type Report struct {
	Baseline  string
	Rounds    int
	Ops       int      // operations per block
	Systems   []string // in the order given
	ratioOf   []string
	samples   map[string]map[string][]float64 // system -> unit -> value per round
	LoadStart float64                         // 1-minute load average; -1 if unknown
	LoadEnd   float64
	CPUs      int
}

// Compare runs every system for opts.Rounds blocks of n operations each,
// rotating their order every round, and returns what it measured.
func Compare(opts Options, n int, systems ...System) (*Report, error) {
	if err := check(opts, n, systems); err != nil {
		return nil, err
	}
	rep := &Report{
		Baseline: opts.Baseline,
		Rounds:   opts.Rounds,
		Ops:      n,
		ratioOf:  append([]string{"ns/op"}, opts.Ratios...),
		samples:  make(map[string]map[string][]float64, len(systems)),
		CPUs:     runtime.NumCPU(),
	}
	if rep.Rounds == 0 {
		rep.Rounds = DefaultRounds
	}
	if opts.CPU {
		rep.ratioOf = append(rep.ratioOf, "cpu-ns/op")
	}
	for _, s := range systems {
		rep.Systems = append(rep.Systems, s.Name)
		rep.samples[s.Name] = map[string][]float64{}
	}
	rep.LoadStart = loadAvg()
	for _, i := range Schedule(rep.Rounds, len(systems)) {
		s := systems[i]
		for unit, v := range block(s, n, opts) {
			rep.samples[s.Name][unit] = append(rep.samples[s.Name][unit], v)
		}
	}
	rep.LoadEnd = loadAvg()
	return rep, nil
}

func check(opts Options, n int, systems []System) error {
	if n < 1 {
		return fmt.Errorf("fair: %d operations per block", n)
	}
	if opts.Rounds < 0 {
		return fmt.Errorf("fair: %d rounds", opts.Rounds)
	}
	seen := map[string]bool{}
	for _, s := range systems {
		if s.Name == "" || strings.ContainsAny(s.Name, " \t\n") || s.Run == nil {
			return fmt.Errorf("fair: system %q needs a name without spaces and a Run", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("fair: two systems named %q", s.Name)
		}
		seen[s.Name] = true
	}
	if !seen[opts.Baseline] {
		return errors.New("fair: the baseline " + strconv.Quote(opts.Baseline) + " is not among the systems")
	}
	return nil
}

// Schedule returns the order of the blocks: rounds rounds of the systems
// 0..n-1, round r starting at system r mod n.
func Schedule(rounds, n int) []int {
	order := make([]int, 0, rounds*n)
	for r := range rounds {
		for i := range n {
			order = append(order, (r+i)%n)
		}
	}
	return order
}

// block runs one block of s and returns its per-operation metrics.
func block(s System, n int, opts Options) Metrics {
	if s.Prepare != nil {
		s.Prepare(n)
	}
	if opts.GC {
		runtime.GC()
	}
	var m0, m1 runtime.MemStats
	if opts.Mem {
		runtime.ReadMemStats(&m0)
	}
	var cpu0 time.Duration
	if opts.CPU {
		cpu0 = CPUTime()
	}
	start := time.Now()
	extra := s.Run(n)
	elapsed := time.Since(start)
	var cpu1 time.Duration
	if opts.CPU {
		cpu1 = CPUTime()
	}
	if opts.Mem {
		runtime.ReadMemStats(&m1)
	}
	out := Metrics{"ns/op": float64(elapsed.Nanoseconds()) / float64(n)}
	if opts.Mem {
		out["allocs/op"] = float64(m1.Mallocs-m0.Mallocs) / float64(n)
		out["B/op"] = float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)
	}
	if opts.CPU && cpu0 >= 0 && cpu1 >= 0 {
		out["cpu-ns/op"] = float64((cpu1 - cpu0).Nanoseconds()) / float64(n)
	}
	for unit, v := range extra {
		out[unit] = v
	}
	return out
}

// Median returns the median over rounds of system's unit, or 0 if it was
// not measured.
func (r *Report) Median(system, unit string) float64 { return median(r.samples[system][unit]) }

// Ratio returns the min and median over rounds of system's unit divided
// by the baseline's in the same round.
func (r *Report) Ratio(system, unit string) (lo, med float64) {
	xs, base := r.samples[system][unit], r.samples[r.Baseline][unit]
	if len(xs) != len(base) || len(xs) == 0 {
		return 0, 0
	}
	ratios := make([]float64, len(xs))
	for i := range xs {
		ratios[i] = xs[i] / base[i]
	}
	return slices.Min(ratios), median(ratios)
}

// Metrics returns the metrics to report, named as the package doc says.
func (r *Report) Metrics() Metrics {
	m := Metrics{"cpus": float64(r.CPUs)}
	if r.LoadStart >= 0 {
		m["load-start"] = r.LoadStart
		m["load-end"] = r.LoadEnd
	}
	for _, s := range r.Systems {
		for unit := range r.samples[s] {
			m[s+"-"+unit] = r.Median(s, unit)
		}
		if s == r.Baseline {
			continue
		}
		for _, unit := range r.ratioOf {
			name := s + "/" + r.Baseline
			if unit != "ns/op" {
				name += "-" + unit
			}
			lo, med := r.Ratio(s, unit)
			m[name+"-min"], m[name+"-med"] = lo, med
		}
	}
	return m
}

// Run runs a comparison of b.N operations per block (see the package doc)
// and reports its metrics on b. It fails b if opts or systems are wrong.
func Run(b *testing.B, opts Options, systems ...System) *Report {
	b.Helper()
	rep, err := Compare(opts, b.N, systems...)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(0, "ns/op") // the whole comparison per b.N: meaningless
	for unit, v := range rep.Metrics() {
		b.ReportMetric(v, unit)
	}
	return rep
}

// Parallel runs n operations on runtime.GOMAXPROCS goroutines and waits
// for them: body(worker, ops) runs ops operations as goroutine worker
// (0, 1, ...); the ops of all workers add up to n.
func Parallel(n int, body func(worker, ops int)) {
	p := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range p {
		ops := n / p
		if w < n%p {
			ops++
		}
		wg.Go(func() { body(w, ops) })
	}
	wg.Wait()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loadAvg returns the 1-minute load average from /proc/loadavg, or -1.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return -1
	}
	return v
}
