package bench

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/maypok86/otter/v2"
)

// The floor under BenchmarkKillOwner's figure at 256 KiB: what
// any cache of one node's size costs, on the membership workload's key
// sequence, in loads per key asked in a 10 s window, with no kill at all.
// The sequence is one owner's share of the cluster's Gets: zipf(1.01) over
// 100,000 keys as the clients draw them, the keys one node of 5 owns (a
// fifth of them, picked by hash; the mean over the 5 owners is reported),
// with as many Gets before and in the window as the cluster serves in the
// benchmark's warm-up and window on an idle machine (60,000 a second).
// Each system replays it from empty, and the loads of the window are
// counted per distinct key asked in it: the benchmark's loads/dead-key.
// The figure grows with the Gets in the window (more keys are asked more
// than once), so BenchmarkKillOwnerFloor (churn_test.go) also computes
// it on the very sequence a run of the cluster served.
//
//   - opt: the offline optimum (Belady: evict the key asked again
//     farthest in the future, and do not admit a key asked later than
//     all those held), starting the window with the keys asked first in
//     it already held: no cache of that many entries does better, online
//     or not.
//   - a0: the keys ranked most popular held for ever, nothing else: the
//     best an online cache can do in the long run when requests are
//     independent draws of a fixed popularity, as zipf draws are (the A0
//     policy); W-TinyLFU approximates it.
//   - geecache: a cache.Group of the node's byte budget (64-byte values,
//     7-byte keys: 71 bytes an entry), then otter and exact LRU of as many
//     entries.

const (
	floorNodes      = 5
	floorWarmGets   = 1_200_000 // the cluster's Gets in the warm-up and steady phase (20 s)
	floorWindowGets = 600_000   // the cluster's Gets in the 10 s window
)

// floorTrace returns owner's share of the cluster's Gets (owner 0 to
// floorNodes-1; floorNodes for all of them): key numbers, the first warm
// of them before the window.
func floorTrace(owner uint64) (trace []int, warm int) {
	r := rand.New(rand.NewPCG(1, 18))
	z := rand.NewZipf(r, 1.01, 1, mbKeys-1)
	for i := range floorWarmGets + floorWindowGets {
		id := int(z.Uint64())
		if i == floorWarmGets {
			warm = len(trace)
		}
		if owner == floorNodes || xxhash.Sum64String(mbKey(id))%floorNodes == owner {
			trace = append(trace, id)
		}
	}
	return trace, warm
}

// mbKeys is the membership workload's key count (mbConfigFor's keys).
const mbKeys = 100_000

// floorCost is the loads of the window (loaded[i] for request i) per
// distinct key asked in it.
func floorCost(trace []int, warm int, loaded func(i, id int) bool) float64 {
	asked := map[int]bool{}
	loads := 0
	for i, id := range trace {
		l := loaded(i, id)
		if i >= warm {
			asked[id] = true
			if l {
				loads++
			}
		}
	}
	return float64(loads) / float64(len(asked))
}

func floorGeeCache(tb testing.TB, entries int, trace []int, warm int) float64 {
	loads := 0
	g, err := cache.NewRegistry().NewGroup("floor", int64(entries*(7+mbValue)), getter.Func(
		func(_ context.Context, key string) ([]byte, error) { loads++; return mbValueOf(key), nil }), nil)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	return floorCost(trace, warm, func(_, id int) bool {
		n := loads
		if _, err := g.Get(ctx, mbKey(id)); err != nil {
			tb.Fatal(err)
		}
		return loads > n
	})
}

func floorOtter(entries int, trace []int, warm int) float64 {
	c := otter.Must(&otter.Options[int, []byte]{MaximumSize: entries})
	defer c.StopAllGoroutines()
	return floorCost(trace, warm, func(_, id int) bool {
		if _, ok := c.GetIfPresent(id); ok {
			return false
		}
		c.Set(id, nil)
		return true
	})
}

func floorLRU(tb testing.TB, entries int, trace []int, warm int) float64 {
	c, err := lru.New[int, struct{}](entries)
	if err != nil {
		tb.Fatal(err)
	}
	return floorCost(trace, warm, func(_, id int) bool {
		if _, ok := c.Get(id); ok {
			return false
		}
		c.Add(id, struct{}{})
		return true
	})
}

// floorA0 holds the entries most popular keys of the owner's share: the
// clients' zipf draws key number k with probability falling with k.
func floorA0(entries int, owns func(id int) bool, trace []int, warm int) float64 {
	held := map[int]bool{}
	for id := 0; id < mbKeys && len(held) < entries; id++ {
		if owns(id) {
			held[id] = true
		}
	}
	return floorCost(trace, warm, func(_, id int) bool { return !held[id] })
}

// floorOpt is Belady's optimum over the window, starting with the entries
// keys asked first in it held.
func floorOpt(entries int, trace []int, warm int) float64 {
	w := trace[warm:]
	next := make([]int, len(w)) // the index of the next request of the same key
	last := map[int]int{}
	for i := len(w) - 1; i >= 0; i-- {
		next[i] = len(w)
		if j, ok := last[w[i]]; ok {
			next[i] = j
		}
		last[w[i]] = i
	}
	nextOf := map[int]int{} // held keys: their next request
	h := &farthest{}
	for i, id := range w {
		if len(nextOf) == entries {
			break
		}
		if _, ok := nextOf[id]; !ok {
			nextOf[id] = i // held from the start: its first request hits
			heap.Push(h, use{i, id})
		}
	}
	loads := 0
	for i, id := range w {
		if _, ok := nextOf[id]; ok {
			nextOf[id] = next[i]
			heap.Push(h, use{next[i], id})
			continue
		}
		loads++
		if len(nextOf) < entries {
			nextOf[id] = next[i]
			heap.Push(h, use{next[i], id})
			continue
		}
		for { // drop stale heap entries
			top := (*h)[0]
			if n, ok := nextOf[top.id]; ok && n == top.next {
				break
			}
			heap.Pop(h)
		}
		if next[i] >= (*h)[0].next {
			continue // asked later than every key held: not kept
		}
		delete(nextOf, heap.Pop(h).(use).id)
		nextOf[id] = next[i]
		heap.Push(h, use{next[i], id})
	}
	asked := map[int]bool{}
	for _, id := range w {
		asked[id] = true
	}
	return float64(loads) / float64(len(asked))
}

type use struct{ next, id int }

// farthest is a max-heap of uses by next.
type farthest []use

func (h farthest) Len() int           { return len(h) }
func (h farthest) Less(i, j int) bool { return h[i].next > h[j].next }
func (h farthest) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *farthest) Push(x any)        { *h = append(*h, x.(use)) }
func (h *farthest) Pop() any {
	o := *h
	x := o[len(o)-1]
	*h = o[:len(o)-1]
	return x
}

// BenchmarkChurnFloor reports each system's loads per key asked in the
// window (metric <system>-loads/key) at two sizes: 256 KiB of 71-byte
// entries (3,692), and the share of it the main cache holds when the hot
// cache holds its largest share (3,281, an eighth of main on top). Run
// with -benchtime=1x; the figures depend only on the trace's fixed random
// seed, but for geecache's (its hash seed is random) and otter's.
func BenchmarkChurnFloor(b *testing.B) {
	for _, size := range []struct {
		name    string
		entries int
	}{{"256KiB", mbSmall / (7 + mbValue)}, {"main-share", mbSmall / (7 + mbValue) * 8 / 9}} {
		b.Run(size.name, func(b *testing.B) {
			for range b.N {
				n := size.entries
				var opt, a0, gee, ott, lr, gets float64
				for o := range uint64(floorNodes) {
					trace, warm := floorTrace(o)
					opt += floorOpt(n, trace, warm) / floorNodes
					owns := func(id int) bool { return xxhash.Sum64String(mbKey(id))%floorNodes == o }
					a0 += floorA0(n, owns, trace, warm) / floorNodes
					gee += floorGeeCache(b, n, trace, warm) / floorNodes
					ott += floorOtter(n, trace, warm) / floorNodes
					lr += floorLRU(b, n, trace, warm) / floorNodes
					gets += float64(len(trace)-warm) / floorNodes
				}
				b.ReportMetric(opt, "opt-loads/key")
				b.ReportMetric(a0, "a0-loads/key")
				b.ReportMetric(gee, "geecache-loads/key")
				b.ReportMetric(ott, "otter-loads/key")
				b.ReportMetric(lr, "lru-loads/key")
				b.ReportMetric(gets, "window-gets")
			}
		})
	}
}

// BenchmarkChurnFloorKill is the floor after a kill: the 4 survivors'
// main caches (4 x 3,281 entries; 256KiB: 4 x 3,692, their whole budgets)
// for all 100,000 keys, against the 5 nodes' before it, on the whole cluster's sequence: opt and a0 loads per
// key asked in the window (every key alike: the dead owner's keys cost
// what the others do once its memory is gone).
func BenchmarkChurnFloorKill(b *testing.B) {
	trace, warm := floorTrace(floorNodes)
	all := func(int) bool { return true }
	for _, size := range []struct {
		name    string
		entries int
	}{{"main-share", mbSmall / (7 + mbValue) * 8 / 9}, {"256KiB", mbSmall / (7 + mbValue)}} {
		for _, nodes := range []int{5, 4} {
			b.Run(fmt.Sprint(size.name, "/", nodes, "-nodes"), func(b *testing.B) {
				for range b.N {
					b.ReportMetric(floorOpt(nodes*size.entries, trace, warm), "opt-loads/key")
					b.ReportMetric(floorA0(nodes*size.entries, all, trace, warm), "a0-loads/key")
				}
			})
		}
	}
}
