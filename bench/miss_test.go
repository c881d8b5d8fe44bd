package bench

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/golang/groupcache"
	"github.com/maypok86/otter/v2"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The miss benchmark: every Get asks for a key the cache has never seen,
// and the source answers at once with 64 bytes, so what is measured is the
// load machinery (duplicate suppression, the insert, the copy). Budgets are
// large enough that nothing is evicted.
const (
	missBudget    = 1 << 30
	missRounds    = 25
	missBlockOps  = 4_000 // Gets per system per round
	missValueSize = 64
)

// gcMissGroup is golang/groupcache's group for the miss benchmark. Its
// groups are process-wide and fix their peers at their first Get, so it is
// made, and its peers fixed to none, when the package is initialised:
// before BenchmarkRemoteFetch registers an HTTPPool in this process.
var gcMissGroup = func() *groupcache.Group {
	value := make([]byte, missValueSize)
	g := groupcache.NewGroup("bench-miss", missBudget, groupcache.GetterFunc(
		func(_ context.Context, _ string, dest groupcache.Sink) error {
			return dest.SetBytes(value) // SetBytes copies, as our Group does
		}))
	var v groupcache.ByteView
	if err := g.Get(context.Background(), "init", groupcache.ByteViewSink(&v)); err != nil {
		panic(err)
	}
	return g
}()

// missSystem is one system of the comparison: get loads key, which the
// system has not seen.
type missSystem struct {
	name  string
	get   func(key string) error
	loads func() int64 // keys loaded from the source so far
}

// missSystems returns the systems of one benchmark run, golang/groupcache
// first (the reference of the ratios). Ours runs twice: with a context
// that cannot be cancelled, as the others' callers pass, and with a
// cancellable one (a request's), for which every waiter may leave on its
// own and the load needs a goroutine of its own.
func missSystems(b testing.TB) []missSystem {
	value := make([]byte, missValueSize)
	src := getter.Func(func(context.Context, string) ([]byte, error) { return value, nil })
	ours, err := cache.NewRegistry().NewGroup("bench-miss", missBudget, src, nil)
	if err != nil {
		b.Fatal(err)
	}
	bg, cancellable := context.Background(), b.Context()
	oc := otter.Must(&otter.Options[string, []byte]{MaximumSize: 1 << 22})
	loader := otter.LoaderFunc[string, []byte](func(context.Context, string) ([]byte, error) {
		return bytes.Clone(value), nil // a fresh value, as a source returns
	})
	oursLoads := func() int64 { return ours.Stats().LocalLoads }
	return []missSystem{
		{"groupcache", func(key string) error {
			var v groupcache.ByteView
			return gcMissGroup.Get(bg, key, groupcache.ByteViewSink(&v))
		}, gcMissGroup.Stats.LocalLoads.Get},
		{"geecache", func(key string) error { _, err := ours.Get(bg, key); return err }, oursLoads},
		{"geecache-cancellable-ctx", func(key string) error { _, err := ours.Get(cancellable, key); return err }, oursLoads},
		{"otter", func(key string) error { _, err := oc.Get(bg, key, loader); return err },
			func() int64 { return int64(oc.EstimatedSize()) }},
	}
}

// missBlock times n Gets of fresh keys on sys, spread over procs
// goroutines, and returns the wall time per Get and the allocations per Get.
func missBlock(b testing.TB, sys missSystem, procs, n int, prefix string) (nsPerOp, allocsPerOp float64) {
	keys := make([][]string, procs)
	for p := range keys {
		keys[p] = make([]string, n/procs)
		for i := range keys[p] {
			keys[p][i] = fmt.Sprintf("%s-%d-%d", prefix, p, i)
		}
	}
	runtime.GC() // no system pays for the garbage of the one before
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			<-start
			for _, k := range keys[p] {
				if err := sys.get(k); err != nil {
					b.Error(sys.name, err)
					return
				}
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	runtime.ReadMemStats(&after)
	ops := float64(procs * (n / procs))
	return float64(elapsed.Nanoseconds()) / ops, float64(after.Mallocs-before.Mallocs) / ops
}

// BenchmarkMiss runs the systems in alternating blocks (a round runs each
// system once, starting with a different one each round) so that all see
// the same machine load, and reports per system the median ns and
// allocations per Get, and the min and median over rounds of its time
// divided by golang/groupcache's in the same round. One iteration is a
// whole comparison: run it with -benchtime=1x (see README.md).
func BenchmarkMiss(b *testing.B) {
	for _, mode := range []struct {
		name  string
		procs int
	}{{"serial", 1}, {"parallel", runtime.GOMAXPROCS(0)}} {
		b.Run(mode.name, func(b *testing.B) {
			systems := missSystems(b)
			ns := make([][]float64, len(systems)) // [system][round]
			allocs := make([][]float64, len(systems))
			nonce := time.Now().UnixNano() // gcMissGroup outlives this run
			round := 0
			for b.Loop() {
				for r := range missRounds {
					for j := range systems {
						s := (r + j) % len(systems)
						prefix := fmt.Sprintf("%d-%d-%s", nonce, round, systems[s].name)
						t, a := missBlock(b, systems[s], mode.procs, missBlockOps, prefix)
						ns[s] = append(ns[s], t)
						allocs[s] = append(allocs[s], a)
					}
					round++
				}
			}
			if n := gcMissGroup.Stats.PeerLoads.Get(); n != 0 {
				b.Fatalf("groupcache loaded %d keys from peers; its misses must be local", n)
			}
			for s, sys := range systems {
				b.ReportMetric(median(ns[s]), sys.name+"-ns/get")
				b.ReportMetric(median(allocs[s]), sys.name+"-allocs/get")
				if s == 0 {
					continue
				}
				ratios := make([]float64, len(ns[s]))
				for r := range ratios {
					ratios[r] = ns[s][r] / ns[0][r]
				}
				b.ReportMetric(slices.Min(ratios), sys.name+"/groupcache-min")
				b.ReportMetric(median(ratios), sys.name+"/groupcache-med")
			}
		})
	}
}

// median returns the median of xs (the upper one of an even count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// TestMissHarness runs a small block of each system, serial and parallel,
// and checks that each Get loaded its key from the source: no error, no
// hit, and golang/groupcache's misses stay local.
func TestMissHarness(t *testing.T) {
	for _, procs := range []int{1, 2} {
		for i, sys := range missSystems(t) {
			const n = 200
			before := sys.loads()
			prefix := fmt.Sprintf("harness-%d-%d-%d", time.Now().UnixNano(), procs, i)
			_, allocs := missBlock(t, sys, procs, n, prefix)
			if got := sys.loads() - before; got != n {
				t.Errorf("%s, %d goroutines: %d loads for %d fresh keys", sys.name, procs, got, n)
			}
			t.Logf("%s, %d goroutines: %.1f allocs per Get", sys.name, procs, allocs)
		}
	}
	if n := gcMissGroup.Stats.PeerLoads.Get(); n != 0 {
		t.Errorf("groupcache loaded %d keys from peers", n)
	}
}
