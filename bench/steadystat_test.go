package bench

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sort"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
)

// The counters, machine readings and warm-ups of BenchmarkSteadyLoads
// (steady_test.go).

// slStats sums the counters of every node's group.
func slStats(c *mbCluster) (s cache.Stats) {
	for _, n := range *c.lb.Load() {
		t := n.group.Stats()
		s.Gets += t.Gets
		s.PeerRequests += t.PeerRequests
		s.PeerLoads += t.PeerLoads
		s.PeerErrors += t.PeerErrors
		s.FallbackLoads += t.FallbackLoads
		s.Abandoned += t.Abandoned
		s.LocalLoads += t.LocalLoads
		s.LoadErrors += t.LoadErrors
		s.DedupWaits += t.DedupWaits
		s.Hedges += t.Hedges
		s.HedgeWins += t.HedgeWins
		s.EjectedLoads += t.EjectedLoads
		s.NextPeer += t.NextPeer
		s.Handoffs += t.Handoffs
		s.HandoffMisses += t.HandoffMisses
		s.PeerBusy += t.PeerBusy
		s.StaleServes += t.StaleServes
		s.Refreshes += t.Refreshes
		s.Main.Items += t.Main.Items
		s.Main.Bytes += t.Main.Bytes
		s.Main.Evictions += t.Main.Evictions
		s.Hot.Items += t.Hot.Items
		s.Hot.Bytes += t.Hot.Bytes
		s.Hot.Evictions += t.Hot.Evictions
		for _, p := range t.Peers {
			s.Peers = append(s.Peers, cache.PeerStats{Ejections: p.Ejections})
		}
	}
	return s
}

// slEjections sums the ejections of every peer in s.Peers.
func slEjections(s cache.Stats) (n int64) {
	for _, p := range s.Peers {
		n += p.Ejections
	}
	return n
}

// schedP99 returns the 99th percentile of the goroutine scheduling
// latencies in h minus h0 (runtime/metrics), and the largest bucket seen.
func schedP99(h0, h *metrics.Float64Histogram) (p99, top float64) {
	var total uint64
	d := make([]uint64, len(h.Counts))
	for i := range h.Counts {
		d[i] = h.Counts[i]
		if h0 != nil && i < len(h0.Counts) {
			d[i] -= h0.Counts[i]
		}
		total += d[i]
	}
	var run uint64
	for i, n := range d {
		run += n
		if n > 0 {
			top = h.Buckets[i+1]
		}
		if p99 == 0 && run*100 >= total*99 && total > 0 {
			p99 = h.Buckets[i+1]
		}
	}
	return p99, top
}

// readSched reads the scheduling latencies so far. (When every goroutine
// is CPU-bound, as in a window of hits only, they measure the waits for a
// core between preemptions, not stalls.)
func readSched() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	h := s[0].Value.Float64Histogram()
	return &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: h.Buckets}
}

// slBursts says how the loads fall in time: in how many 10 ms buckets, the
// most in one, and how many start within 30 ms after the end of a GC pause
// of the process (all nodes share it), against the share of the window
// those 30 ms cover.
func slBursts(b *testing.B, loads []slLoad, began int64, ms *runtime.MemStats) {
	if len(loads) == 0 {
		return
	}
	buckets := map[int64]int{}
	top := 0
	for _, l := range loads {
		k := int64(l.at / (10 * time.Millisecond))
		buckets[k]++
		top = max(top, buckets[k])
	}
	var ends []int64 // pause ends within the window, Unix ns
	var pauses []time.Duration
	for i := range min(int(ms.NumGC), len(ms.PauseEnd)) {
		j := (int(ms.NumGC) - 1 - i + len(ms.PauseEnd)) % len(ms.PauseEnd)
		if e := int64(ms.PauseEnd[j]); e >= began {
			ends = append(ends, e)
			pauses = append(pauses, time.Duration(ms.PauseNs[j]))
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i] < ends[j] })
	after := 0
	for _, l := range loads {
		t := began + int64(l.at)
		i := sort.Search(len(ends), func(i int) bool { return ends[i] > t }) // first end after t
		if i > 0 && t-ends[i-1] <= int64(30*time.Millisecond) {
			after++
		}
	}
	last := began + int64(loads[len(loads)-1].at)
	cover := float64(len(ends)) * 0.030 / (float64(last-began) / 1e9)
	sort.Slice(pauses, func(i, j int) bool { return pauses[i] < pauses[j] })
	if len(pauses) == 0 {
		pauses = []time.Duration{0}
	}
	b.Logf("  bursts: %d loads in %d of the window's 10 ms buckets, at most %d in one; %d (%.0f%%) start within 30 ms after one of the %d GC pause ends (which cover %.1f%% of the time); pauses min %v median %v max %v",
		len(loads), len(buckets), top, after, 100*float64(after)/float64(len(loads)), len(ends), 100*cover,
		pauses[0], pauses[len(pauses)/2], pauses[len(pauses)-1])
}

// prewarmEveryNode asks every node for every key, 500 a GetMany, so that
// each holds the keys it does not own in its hot cache too.
func (c *mbCluster) prewarmEveryNode(keys, workers int) {
	const batch = 500
	ns := *c.lb.Load()
	perNode := (keys + batch - 1) / batch
	forEach(len(ns)*perNode, workers, func(b int) {
		from := b % perNode * batch
		ks := make([]string, 0, batch)
		for id := from; id < min(from+batch, keys); id++ {
			ks = append(ks, mbKey(id))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		ns[b/perNode].group.GetMany(ctx, ks, func(int, cache.ByteView, error) {})
		cancel()
	})
}

// prewarmEveryNodeGet asks every node for every key with a Get each.
func (c *mbCluster) prewarmEveryNodeGet(keys, workers int) {
	ns := *c.lb.Load()
	forEach(keys*len(ns), workers, func(j int) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = ns[j/keys].group.Get(ctx, mbKey(j%keys))
		cancel()
	})
}
