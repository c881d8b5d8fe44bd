package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
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

// hitWorkload is built once per process: the keys and the zipf sequence
// are shared read-only by every benchmark, so they all read the same keys
// in the same order.
type hitWorkload struct {
	keys []string
	seq  []string // hitSeqLen keys in zipf order
}

var hitLoad = sync.OnceValue(func() *hitWorkload {
	w := &hitWorkload{keys: make([]string, hitEntries)}
	for i := range w.keys {
		w.keys[i] = hitKey(i)
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), hitZipfS, 1, hitEntries-1)
	w.seq = make([]string, hitSeqLen)
	for i := range w.seq {
		w.seq[i] = w.keys[z.Uint64()]
	}
	return w
})

// gcHitGroup is golang/groupcache's group for the hit benchmark. Its groups
// are process-wide, so it is made once per process; its first Get, which
// fixes its peers, runs before any HTTPPool exists, so it has none.
var gcHitGroup = sync.OnceValue(func() *groupcache.Group {
	g := groupcache.NewGroup("bench-hit", 256<<20, groupcache.GetterFunc(
		func(_ context.Context, key string, dest groupcache.Sink) error {
			return dest.SetBytes(hitValue(key))
		}))
	var s string
	if err := g.Get(context.Background(), hitKey(0), groupcache.StringSink(&s)); err != nil {
		panic(err)
	}
	return g
})

// gcHitGroupFull is gcHitGroup holding every key of the workload.
var gcHitGroupFull = sync.OnceValue(func() *groupcache.Group {
	g := gcHitGroup()
	var s string
	for _, k := range hitLoad().keys {
		if err := g.Get(context.Background(), k, groupcache.StringSink(&s)); err != nil {
			panic(err)
		}
	}
	return g
})

// newOurHitGroup returns a GeeCache group holding every key of the
// workload, on a registry of its own.
func newOurHitGroup(tb testing.TB) *cache.Group {
	g, err := cache.NewRegistry().NewGroup("bench-hit", 256<<20, getter.Func(
		func(_ context.Context, key string) ([]byte, error) { return hitValue(key), nil }), nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, k := range hitLoad().keys {
		if _, err := g.Get(context.Background(), k); err != nil {
			tb.Fatal(err)
		}
	}
	if s := g.Stats(); s.Main.Items != hitEntries {
		tb.Fatalf("our group holds %d items, want %d", s.Main.Items, hitEntries)
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

// benchHits runs get over the zipf sequence serially and in parallel.
// Each parallel goroutine starts at its own offset in the sequence.
// get returns the value's length so the work cannot be optimised away;
// a miss (length < 0) fails the benchmark.
func benchHits(b *testing.B, get func(key string) int) {
	seq := hitLoad().seq
	const mask = hitSeqLen - 1
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		i := 0
		for b.Loop() {
			n += get(seq[i&mask])
			i++
		}
		if n < 0 {
			b.Fatal("miss")
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var next atomic.Uint64
		var misses atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			// Offsets far apart, so goroutines do not walk in step.
			i := int(next.Add(1) * 40_503)
			for pb.Next() {
				if get(seq[i&mask]) < 0 {
					misses.Add(1)
				}
				i++
			}
		})
		if m := misses.Load(); m > 0 {
			b.Fatalf("%d misses", m)
		}
	})
}

// BenchmarkHit measures a Get of a present key, zipf-distributed over
// 100k entries of 64 bytes, for GeeCache's Group.Get, golang/groupcache's
// Group.Get (one node, no peers), otter v2 and golang-lru v2 raw Gets and
// a map under sync.RWMutex.
func BenchmarkHit(b *testing.B) {
	w := hitLoad()
	ctx := context.Background()

	b.Run("geecache", func(b *testing.B) {
		g := newOurHitGroup(b)
		benchHits(b, func(k string) int {
			v, err := g.Get(ctx, k)
			if err != nil {
				return -1
			}
			return v.Len()
		})
	})

	b.Run("groupcache", func(b *testing.B) {
		g := gcHitGroupFull()
		benchHits(b, func(k string) int {
			var s string
			if err := g.Get(ctx, k, groupcache.StringSink(&s)); err != nil {
				return -1
			}
			return len(s)
		})
	})

	b.Run("otter", func(b *testing.B) {
		c := otter.Must(&otter.Options[string, []byte]{MaximumSize: 2 * hitEntries})
		b.Cleanup(func() { c.StopAllGoroutines() })
		for _, k := range w.keys {
			c.Set(k, hitValue(k))
		}
		benchHits(b, func(k string) int {
			v, ok := c.GetIfPresent(k)
			if !ok {
				return -1
			}
			return len(v)
		})
	})

	b.Run("golang-lru", func(b *testing.B) {
		c, err := lru.New[string, []byte](2 * hitEntries)
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range w.keys {
			c.Add(k, hitValue(k))
		}
		benchHits(b, func(k string) int {
			v, ok := c.Get(k)
			if !ok {
				return -1
			}
			return len(v)
		})
	})

	b.Run("rwmutex-map", func(b *testing.B) {
		m := &rwMap{m: make(map[string][]byte, hitEntries)}
		for _, k := range w.keys {
			m.m[k] = hitValue(k)
		}
		benchHits(b, func(k string) int {
			v, ok := m.get(k)
			if !ok {
				return -1
			}
			return len(v)
		})
	})
}

// TestHitDoesNotAllocate checks the goal of 0 allocations per hit
// of GeeCache's Group.Get.
func TestHitDoesNotAllocate(t *testing.T) {
	g, err := cache.NewRegistry().NewGroup("allocs", 1<<20, getter.Func(
		func(_ context.Context, key string) ([]byte, error) { return hitValue(key), nil }), nil)
	if err != nil {
		t.Fatal(err)
	}
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
