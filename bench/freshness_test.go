package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/bench/internal/fair"
	"github.com/geecache/geecache/cache"
)

// The hit-with-expiry workload: fxHitKeys keys, all fresh in a
// group with no peers, read in a zipf order generated beforehand.
const (
	fxHitKeys   = 10_000
	fxHitSeqLen = 1 << 16 // a power of two
)

// fxHitSeq returns fxHitSeqLen keys of fxHitKeys in zipf(1.01) order.
func fxHitSeq() (keys, seq []string) {
	keys = make([]string, fxHitKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("e-%05d", i)
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.01, 1, fxHitKeys-1)
	seq = make([]string, fxHitSeqLen)
	for i := range seq {
		seq[i] = keys[z.Uint64()]
	}
	return keys, seq
}

// newFxGroup returns a group with no peers on a registry of its own,
// with the options o (its Logger is set here).
func newFxGroup(tb testing.TB, src *fxSource, o cache.GroupOptions) *cache.Group {
	o.Logger = quietLog()
	g, err := cache.NewRegistry().NewGroup(fxGroup, 1<<30, src, &o)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// fxHitSystem is n hits on g in seq's order, serial or spread over
// GOMAXPROCS goroutines.
func fxHitSystem(tb testing.TB, name string, g *cache.Group, keys, seq []string, parallel bool) fair.System {
	ctx := context.Background()
	for _, k := range keys {
		if _, err := g.Get(ctx, k); err != nil {
			tb.Fatal(err)
		}
	}
	var sink atomic.Int64
	run := func(start, ops int) {
		total := 0
		for i := range ops {
			v, err := g.Get(ctx, seq[(start+i)&(fxHitSeqLen-1)])
			if err != nil {
				panic(err) // every key is present and fresh
			}
			total += v.Len()
		}
		sink.Add(int64(total))
	}
	return fair.System{Name: name, Run: func(n int) fair.Metrics {
		if parallel {
			fair.Parallel(n, func(w, ops int) { run(w*7919, ops) })
		} else {
			run(0, n)
		}
		return nil
	}}
}

// BenchmarkHitExpiry compares hits on a group whose values expire
// (GroupOptions.TTL of an hour, so every hit checks a fresh value's
// expiry) with hits on one whose values never expire, in alternating
// blocks, serial and parallel: fxHitKeys keys, zipf order. Metrics:
// ns/op, allocs/op, B/op, and the ttl/no-ttl ratios.
func BenchmarkHitExpiry(b *testing.B) {
	keys, seq := fxHitSeq()
	for _, par := range []bool{false, true} {
		name := map[bool]string{false: "serial", true: "parallel"}[par]
		b.Run(name, func(b *testing.B) {
			ttl := newFxGroup(b, &fxSource{}, cache.GroupOptions{TTL: time.Hour})
			never := newFxGroup(b, &fxSource{}, cache.GroupOptions{})
			fair.Run(b, fair.Options{Baseline: "no-ttl", Mem: true, GC: true, CPU: true},
				fxHitSystem(b, "ttl", ttl, keys, seq, par),
				fxHitSystem(b, "no-ttl", never, keys, seq, par))
		})
	}
}

// TestHitExpiryHarness checks that the hit benchmark's groups answer from
// memory: after warming, a block of Gets loads nothing.
func TestHitExpiryHarness(t *testing.T) {
	keys, seq := fxHitSeq()
	src := &fxSource{}
	g := newFxGroup(t, src, cache.GroupOptions{TTL: time.Hour})
	s := fxHitSystem(t, "ttl", g, keys, seq, true)
	loads := src.calls.Load()
	s.Run(10_000)
	if d := src.calls.Load() - loads; d != 0 {
		t.Fatalf("a block of hits loaded %d keys", d)
	}
	if got := int64(len(keys)); loads != got {
		t.Fatalf("warming loaded %d keys, want %d", loads, got)
	}
}

// fxStampede is the stale-while-revalidate workload: fxStampedeCallers
// concurrent Gets of one key just past its expiry, the source taking
// fxStampedeSource.
const (
	fxStampedeCallers = 1000
	fxStampedeSource  = 20 * time.Millisecond
	// fxStampedeTTL is short, so that Prepare can wait for its keys to
	// expire, and long enough for a stampede to end before the value it
	// loaded expires again.
	fxStampedeTTL = 250 * time.Millisecond
)

// fxStampedeSystem is n stampedes on a group of its own: each one loads a
// fresh key, waits until it has expired, and starts
// fxStampedeCallers Gets of it at once; with swr, the group serves stale
// values for a minute after expiry. Per stampede: the callers' max and
// p50 latency, the refreshes started, and the source's loads (counted
// once the refresh has finished). With hold (tests), the refresh a
// stampede starts ends only once every caller has its answer, so that
// each of them is served stale whatever the machine's load: else a caller
// that a loaded machine starts after the 20 ms refresh has ended gets the
// fresh value (rightly), and the count of stale serves depends on time.
func fxStampedeSystem(b testing.TB, name string, swr, hold bool) fair.System {
	src := &fxSource{latency: fxStampedeSource}
	o := cache.GroupOptions{TTL: fxStampedeTTL}
	if swr {
		o.StaleWhileRevalidate = time.Minute
	}
	g := newFxGroup(b, src, o)
	var round int
	var keys []string
	return fair.System{
		Name: name,
		Prepare: func(n int) {
			keys = keys[:0]
			for i := range n {
				round++
				k := fmt.Sprintf("s%d/k%d", round, i)
				if _, err := g.Get(context.Background(), k); err != nil {
					b.Fatal(err)
				}
				keys = append(keys, k)
			}
			time.Sleep(fxStampedeTTL + 2*time.Millisecond) // every key has just expired (the group's clock ticks by the millisecond)
		},
		Run: func(n int) fair.Metrics {
			var maxs, p50s []time.Duration
			s0, loads0 := g.Stats(), src.calls.Load()
			for _, k := range keys {
				var release chan struct{}
				if hold {
					release = make(chan struct{})
					src.hold.Store(&release)
				}
				lat := fxStampede(b, g, k)
				if hold {
					src.hold.Store(nil)
					close(release)
				}
				maxs, p50s = append(maxs, lat[len(lat)-1]), append(p50s, fxPercentile(lat, 50))
			}
			fxIdle(src)
			s1 := g.Stats()
			return fair.Metrics{
				"max-caller-ns": float64(slices.Max(maxs)),
				"p50-caller-ns": float64(fxPercentile(fxSorted(p50s), 50)),
				"refreshes":     float64(s1.Refreshes-s0.Refreshes) / float64(n),
				"source-loads":  float64(src.calls.Load()-loads0) / float64(n),
				"stale-serves":  float64(s1.StaleServes-s0.StaleServes) / float64(n),
			}
		},
	}
}

// fxStampede starts fxStampedeCallers Gets of key at once and returns
// their latencies, sorted, each from when its goroutine was released.
func fxStampede(tb testing.TB, g *cache.Group, key string) []time.Duration {
	lat := make([]time.Duration, fxStampedeCallers)
	errs := make([]error, fxStampedeCallers)
	start := make(chan struct{})
	done := make(chan struct{}, fxStampedeCallers)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range fxStampedeCallers {
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			t0 := time.Now()
			_, errs[i] = g.Get(ctx, key)
			lat[i] = time.Since(t0)
		}()
	}
	close(start)
	for range fxStampedeCallers {
		<-done
	}
	for _, err := range errs {
		if err != nil {
			tb.Fatalf("Get(%q): %v", key, err)
		}
	}
	return fxSorted(lat)
}

// BenchmarkStaleStampede compares stampedes on a key at its expiry with
// StaleWhileRevalidate (swr) and without (no-swr), in alternating blocks;
// one operation is one stampede of fxStampedeCallers Gets. Metrics per
// stampede: max-caller-ns, p50-caller-ns, refreshes, source-loads,
// stale-serves; and source-latency-ns.
func BenchmarkStaleStampede(b *testing.B) {
	fair.Run(b, fair.Options{Baseline: "no-swr", GC: true, Ratios: []string{"max-caller-ns"}},
		fxStampedeSystem(b, "swr", true, false),
		fxStampedeSystem(b, "no-swr", false, false))
	b.ReportMetric(float64(fxStampedeSource.Nanoseconds()), "source-latency-ns")
}

// fxIdle waits, at most 10 s, until g's source has no call in flight and
// has not been called for twice its latency, so that a background refresh
// that was started has run and been counted.
func fxIdle(src *fxSource) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		calls := src.calls.Load()
		if src.active.Load() == 0 {
			time.Sleep(2 * src.latency)
			if src.active.Load() == 0 && src.calls.Load() == calls {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStaleStampedeHarness runs one block of two stampedes of each
// system and checks what the stampede benchmark reports: with swr one
// refresh and one load per stampede, every caller served stale; without,
// one load and no stale serve.
func TestStaleStampedeHarness(t *testing.T) {
	for _, swr := range []bool{true, false} {
		s := fxStampedeSystem(t, "s", swr, swr) // no-swr: the callers wait for the load
		s.Prepare(2)
		m := s.Run(2)
		wantStale := 0.0
		if swr {
			wantStale = fxStampedeCallers
		}
		if m["source-loads"] != 1 || m["stale-serves"] != wantStale || (swr && m["refreshes"] != 1) {
			t.Errorf("swr=%v: %v; want 1 load per stampede and %v stale serves", swr, m, wantStale)
		}
	}
}
