package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/geecache/geecache/bench/internal/fair"
	"github.com/geecache/geecache/cache"
	groupcache "github.com/golang/groupcache"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/maypok86/otter/v2"
)

// The local hit workload: hitEntries present keys with hitValueLen-byte
// values, read in a zipf(s=hitZipfS) order that is generated before the
// timer starts.
const (
	hitEntries  = 100_000
	hitValueLen = 64
	hitZipfS    = 1.01
	hitSeqLen   = 1 << 18 // pre-generated key sequence; a power of two
)

// hitKey is the key of entry i.
func hitKey(i int) string { return fmt.Sprintf("key-%06d", i) }

// hitValue is the 64-byte value of key, derived from it so that every
// cache under test holds the same bytes.
func hitValue(key string) []byte {
	v := make([]byte, hitValueLen)
	for i := range v {
		v[i] = key[i%len(key)] + byte(i)
	}
	return v
}

// hitWorkload holds a hit benchmark's keys and the zipf sequence in which
// they are read; every system reads the same keys in the same order.
type hitWorkload struct {
	keys []string
	seq  []string // hitSeqLen keys in zipf order
}

// newHitWorkload returns the workload of n entries (at most 1M, the
// largest count hitKey names in fixed width).
func newHitWorkload(n int) *hitWorkload {
	w := &hitWorkload{keys: make([]string, n)}
	for i := range w.keys {
		w.keys[i] = hitKey(i)
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), hitZipfS, 1, uint64(n-1))
	w.seq = make([]string, hitSeqLen)
	for i := range w.seq {
		w.seq[i] = w.keys[z.Uint64()]
	}
	return w
}

// hitLoad is the workload of hitEntries entries, built once per process
// and shared read-only.
var hitLoad = sync.OnceValue(func() *hitWorkload { return newHitWorkload(hitEntries) })

// hitSizes are the entry counts BenchmarkHit compares at.
var hitSizes = []struct {
	name string
	n    int
}{{"10k", 10_000}, {"100k", hitEntries}, {"1M", 1_000_000}}

// newGCHitGroup makes a golang/groupcache group for the hit benchmark and
// does its first Get, which fixes its peers: it must run before the
// process has an HTTPPool (see gcParentNode), so that the group has none.
func newGCHitGroup(name string) *groupcache.Group {
	g := groupcache.NewGroup(name, 256<<20, groupcache.GetterFunc(
		func(_ context.Context, key string, dest groupcache.Sink) error {
			return dest.SetBytes(hitValue(key))
		}))
	var s string
	if err := g.Get(context.Background(), hitKey(0), groupcache.StringSink(&s)); err != nil {
		panic(err)
	}
	return g
}

// gcHitGroup is golang/groupcache's group of hitEntries entries. Its
// groups are process-wide, so each is made once per process.
var gcHitGroup = sync.OnceValue(func() *groupcache.Group { return newGCHitGroup("bench-hit") })

// gcHitGroups holds golang/groupcache's group for every hit size.
var gcHitGroups = map[int]func() *groupcache.Group{
	10_000:     sync.OnceValue(func() *groupcache.Group { return newGCHitGroup("bench-hit-10k") }),
	hitEntries: gcHitGroup,
	1_000_000:  sync.OnceValue(func() *groupcache.Group { return newGCHitGroup("bench-hit-1M") }),
}

// gcHitGroupOf returns the groupcache group of n entries, holding every
// key of w.
func gcHitGroupOf(tb testing.TB, w *hitWorkload) *groupcache.Group {
	g := gcHitGroups[len(w.keys)]()
	var s string
	for _, k := range w.keys {
		if err := g.Get(context.Background(), k, groupcache.StringSink(&s)); err != nil {
			tb.Fatal(err)
		}
	}
	if n := g.CacheStats(groupcache.MainCache).Items; n != int64(len(w.keys)) {
		tb.Fatalf("groupcache group holds %d items, want %d", n, len(w.keys))
	}
	return g
}

// newOurHitGroupOf returns a GeeCache group holding every key of w.
func newOurHitGroupOf(tb testing.TB, w *hitWorkload) *cache.Group {
	g := newGeeGroup(tb, "bench-hit", 1<<30, cheapGetter)
	for _, k := range w.keys {
		if _, err := g.Get(context.Background(), k); err != nil {
			tb.Fatal(err)
		}
	}
	if s := g.Stats(); s.Main.Items != int64(len(w.keys)) {
		tb.Fatalf("our group holds %d items, want %d", s.Main.Items, len(w.keys))
	}
	return g
}

// rwMap is the floor: a plain map under a read-write mutex.
type rwMap struct {
	mu sync.RWMutex
	m  map[string][]byte
}

func (m *rwMap) get(k string) ([]byte, bool) {
	m.mu.RLock()
	v, ok := m.m[k]
	m.mu.RUnlock()
	return v, ok
}

// hitSystem is one cache under the hit load: get returns the length of
// key's value, or -1 on a miss.
type hitSystem struct {
	name string
	get  func(key string) int
}

// hitSystems fills every system with the keys of w and returns them.
func hitSystems(b *testing.B, w *hitWorkload) []hitSystem {
	ctx := context.Background()
	ours := newOurHitGroupOf(b, w)
	gc := gcHitGroupOf(b, w)
	ot := otter.Must(&otter.Options[string, []byte]{MaximumSize: 2 * len(w.keys)})
	b.Cleanup(func() { ot.StopAllGoroutines() })
	gl, err := lru.New[string, []byte](2 * len(w.keys))
	if err != nil {
		b.Fatal(err)
	}
	rw := &rwMap{m: make(map[string][]byte, len(w.keys))}
	for _, k := range w.keys {
		ot.Set(k, hitValue(k))
		gl.Add(k, hitValue(k))
		rw.m[k] = hitValue(k)
	}
	length := func(v []byte, ok bool) int {
		if !ok {
			return -1
		}
		return len(v)
	}
	return []hitSystem{
		{"geecache", func(k string) int {
			v, err := ours.Get(ctx, k)
			if err != nil {
				return -1
			}
			return v.Len()
		}},
		{"groupcache-stringsink", func(k string) int {
			var s string
			if err := gc.Get(ctx, k, groupcache.StringSink(&s)); err != nil {
				return -1
			}
			return len(s)
		}},
		{"groupcache-byteview", func(k string) int {
			var v groupcache.ByteView
			if err := gc.Get(ctx, k, groupcache.ByteViewSink(&v)); err != nil {
				return -1
			}
			return v.Len()
		}},
		{"otter", func(k string) int { return length(ot.GetIfPresent(k)) }},
		{"golang-lru", func(k string) int { return length(gl.Get(k)) }},
		{"rwmutex-map", func(k string) int { return length(rw.get(k)) }},
	}
}

// hitBlocks turns each hit system into a fair.System that reads n keys of
// w's zipf sequence per block, serially or on GOMAXPROCS goroutines (each
// at its own offset). Every system reads the same keys in each round. A
// miss fails the benchmark.
func hitBlocks(b *testing.B, w *hitWorkload, systems []hitSystem, parallel bool) []fair.System {
	const mask = hitSeqLen - 1
	var out []fair.System
	for _, s := range systems {
		var misses atomic.Int64
		off := 0
		run := func(n int) fair.Metrics {
			if parallel {
				fair.Parallel(n, func(worker, ops int) {
					i := off + (worker+1)*40_503 // far apart, so goroutines do not walk in step
					for range ops {
						if s.get(w.seq[i&mask]) < 0 {
							misses.Add(1)
						}
						i++
					}
				})
			} else {
				sum := 0
				for i := off; i < off+n; i++ {
					sum += s.get(w.seq[i&mask])
				}
				if sum < n*hitValueLen {
					misses.Add(1)
				}
			}
			off += n
			if m := misses.Load(); m > 0 {
				b.Fatalf("%s: %d misses", s.name, m)
			}
			return nil
		}
		out = append(out, fair.System{Name: s.name, Run: run})
	}
	return out
}

// BenchmarkHit measures a Get of a present key, zipf-distributed over 10k,
// 100k and 1M entries of 64 bytes, serially and in parallel: GeeCache's
// Group.Get; golang/groupcache's Group.Get (one node, no peers) into a
// StringSink (a copy) and into a ByteViewSink (no copy); otter v2 and
// golang-lru v2 raw Gets; and a map under sync.RWMutex. The systems run in
// alternating blocks (package fair); the baseline is otter.
func BenchmarkHit(b *testing.B) {
	for _, size := range hitSizes {
		b.Run("keys="+size.name, func(b *testing.B) {
			w := hitLoad()
			if size.n != hitEntries {
				w = newHitWorkload(size.n)
			}
			systems := hitSystems(b, w)
			opts := fair.Options{Baseline: "otter", Mem: true, CPU: true}
			b.Run("serial", func(b *testing.B) { fair.Run(b, opts, hitBlocks(b, w, systems, false)...) })
			b.Run("parallel", func(b *testing.B) { fair.Run(b, opts, hitBlocks(b, w, systems, true)...) })
		})
	}
}

// TestHitDoesNotAllocate checks the goal of 0 allocations per hit
// of GeeCache's Group.Get.
func TestHitDoesNotAllocate(t *testing.T) {
	g := newGeeGroup(t, "allocs", 1<<20, cheapGetter)
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = hitKey(i)
		if _, err := g.Get(context.Background(), keys[i]); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		if v, err := g.Get(ctx, keys[i%len(keys)]); err != nil || v.Len() != hitValueLen {
			t.Fatalf("Get = %d bytes, %v", v.Len(), err)
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("a hit allocates %.1f times, want 0", allocs)
	}
}
