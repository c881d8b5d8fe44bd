package bench

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/bench/internal/fair"
	"github.com/geecache/geecache/cache"
)

// The hung-peer workload: fxClients closed-loop clients ask
// node A of a three-node cluster for fresh keys (a third owned by each
// node), each loaded from a source that takes fxSourceLatency.
const (
	fxClients       = 32
	fxSourceLatency = 2 * time.Millisecond
	// fxRunLimit bounds one block's load, whatever its size.
	fxRunLimit = 2 * time.Minute
)

// fxLoad is what one block of Gets observed.
type fxLoad struct {
	elapsed time.Duration
	start   []int64 // Unix nanoseconds, by key
	lat     []time.Duration
	failed  int64
	wrong   int64 // values that were not the key's
	err     error
}

// fxGets gets every key once from clients goroutines on g, checking every
// value, bounded by fxRunLimit.
func fxGets(g *cache.Group, keys []string, clients int) *fxLoad {
	res := &fxLoad{start: make([]int64, len(keys)), lat: make([]time.Duration, len(keys))}
	var next, failed, wrong atomic.Int64
	var once sync.Once
	begin := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), fxRunLimit)
			defer cancel()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(keys) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				v, err := g.Get(ctx, keys[i])
				res.start[i], res.lat[i] = t0.UnixNano(), time.Since(t0)
				switch {
				case err != nil:
					failed.Add(1)
					once.Do(func() { res.err = err })
				case !bytes.Equal(v.ByteSlice(), fxValue(keys[i])):
					wrong.Add(1)
				}
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(begin)
	res.failed, res.wrong = failed.Load(), wrong.Load()
	return res
}

// fxQuiet closes c's idle connections and returns the process's goroutines
// and open descriptors once they have stopped falling (at most 1 s).
func fxQuiet(c *fxCluster) (goroutines, fds int) {
	c.closeIdle()
	g, f := runtime.NumGoroutine(), fxFDs()
	for range 200 {
		time.Sleep(5 * time.Millisecond)
		g2, f2 := runtime.NumGoroutine(), fxFDs()
		if g2 >= g && f2 >= f {
			return min(g, g2), min(f, f2)
		}
		g, f = g2, f2
	}
	return g, f
}

// fxTotals adds up what every block of a system saw.
type fxTotals struct {
	first   int64 // Unix nanoseconds when the first block began
	seconds float64
	lines   int64
	maxLat  time.Duration
}

// fxHungSystem is Gets on node A of c as a fair.System: each block gets n
// fresh keys from fxClients clients. logs is node A's log counter (nil for
// the fault-free cluster); tot adds up every block.
func fxHungSystem(b *testing.B, name string, c *fxCluster, round *atomic.Int64, logs *fxLogCount, tot *fxTotals) fair.System {
	a := c.nodes[0]
	var keys []string
	var owners []int
	var g0, f0 int
	return fair.System{
		Name: name,
		Prepare: func(n int) {
			r := round.Add(1)
			keys, owners = keys[:0], owners[:0]
			for i := range n {
				k := fmt.Sprintf("h%d/k%d", r, i)
				keys, owners = append(keys, k), append(owners, c.owner(k))
			}
			g0, f0 = fxQuiet(c)
		},
		Run: func(n int) fair.Metrics {
			s0, lines0 := a.group.Stats(), int64(0)
			if logs != nil {
				lines0 = logs.lines.Load()
			}
			var peakG, peakF atomic.Int64
			stop := make(chan struct{})
			var sampler sync.WaitGroup
			sampler.Go(func() { fxSample(stop, &peakG, &peakF) })
			if tot.first == 0 {
				tot.first = time.Now().UnixNano()
			}
			res := fxGets(a.group, keys, fxClients)
			close(stop)
			sampler.Wait()
			if res.failed > 0 || res.wrong > 0 {
				b.Fatalf("%s: %d of %d Gets failed, %d wrong values; first error: %v", name, res.failed, n, res.wrong, res.err)
			}
			s1 := a.group.Stats()
			tot.seconds += res.elapsed.Seconds()
			tot.maxLat = max(tot.maxLat, fxPercentile(fxSorted(res.lat), 100))
			m := fair.Metrics{
				"ns/op":  float64(res.elapsed.Nanoseconds()) / float64(n),
				"p50-ns": float64(fxPercentile(fxSorted(res.lat), 50)),
				"p99-ns": float64(fxPercentile(fxSorted(res.lat), 99)),
				// The hedge delay's rule (cache/hedge.go) applied to what
				// A's callers saw of fetches from healthy node B.
				"hedge-est-ns":          float64(fxHedgeEstimate(res, owners)),
				"hedges":                float64(s1.Hedges - s0.Hedges),
				"ejected-loads":         float64(s1.EjectedLoads - s0.EjectedLoads),
				"goroutines-peak-delta": float64(peakG.Load()) - float64(g0),
				"fds-peak-delta":        float64(peakF.Load()) - float64(f0),
			}
			if logs != nil {
				tot.lines += logs.lines.Load() - lines0
				m["log-lines/s"] = float64(logs.lines.Load()-lines0) / res.elapsed.Seconds()
				if fe := logs.firstEject.Load(); fe != 0 {
					var after []time.Duration
					for i, st := range res.start {
						if st >= fe {
							after = append(after, res.lat[i])
						}
					}
					if len(after) > 0 {
						m["p99-after-eject-ns"] = float64(fxPercentile(fxSorted(after), 99))
					}
				}
			}
			c.closeIdle()
			g1, f1, waited := fxSettle(g0, f0, 3*time.Second)
			m["goroutines-after-delta"], m["fds-after-delta"] = float64(g1-g0), float64(f1-f0)
			m["settle-ms"] = float64(waited.Milliseconds())
			return m
		},
	}
}

// fxSample records the peak goroutines and descriptors until stop closes.
func fxSample(stop chan struct{}, peakG, peakF *atomic.Int64) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
			peakG.Store(g)
		}
		if f := int64(fxFDs()); f > peakF.Load() {
			peakF.Store(f)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// fxHedgeEstimate applies the hedge delay's rule (the 99th percentile of
// fetch times, within the defaults of cache.PeerPolicy's HedgeMin and
// HedgeMax) to the latencies of the Gets of keys node 1 owns (a healthy
// peer's fetches).
// The defaults of cache.PeerPolicy's HedgeMin and HedgeMax, as its docs
// state them.
const fxHedgeMin, fxHedgeMax = 10 * time.Millisecond, time.Second

func fxHedgeEstimate(res *fxLoad, owners []int) time.Duration {
	var fetch []time.Duration
	for i, o := range owners {
		if o == 1 {
			fetch = append(fetch, res.lat[i])
		}
	}
	return min(max(fxPercentile(fxSorted(fetch), 99), fxHedgeMin), fxHedgeMax)
}

// BenchmarkHungPeer compares node A of a healthy three-node cluster with
// node A of one whose third node is hung (a listener that accepts and
// never answers), in alternating blocks: fxClients clients, fresh keys, a
// 2 ms source, the default PeerPolicy. The hung cluster lives across
// blocks, as a node does through an outage. Per block: ns/op (the load's
// wall time over its Gets; throughput is its inverse), p50-ns, p99-ns,
// p99-after-eject-ns (Gets that started after A's first ejection
// warning), hedge-est-ns, hedges, ejected-loads, log-lines/s (node A's
// lines at Info and above during the load), and the process's goroutines
// and descriptors (both ends of every loopback connection) at their peak
// and after the load (A's idle connections closed), against the count
// before it. After the rounds the hung node is closed (the fault ends)
// and end-goroutines-delta and end-fds-delta compare the process with its
// state before the first block. Over all blocks: the longest Get of each
// system (max-latency-ns), when the first ejection came after the first
// hung block began (hung-first-eject-after-ns), and node A's log lines per
// second of hung load (hung-log-lines/s-all-blocks).
func BenchmarkHungPeer(b *testing.B) {
	if n := b.N; n > 1 && n < fxClients {
		b.Skipf("a block of %d Gets is below the %d clients; run with -benchtime=Nx, N >= %d", n, fxClients, fxClients)
	}
	logs := &fxLogCount{}
	free := newFxCluster(b, 3, fxConfig{getter: &fxSource{latency: fxSourceLatency}})
	hung := newFxCluster(b, 3, fxConfig{getter: &fxSource{latency: fxSourceLatency}, logs: logs, hung: map[int]bool{2: true}})
	fxQuiet(free)
	g0, f0 := fxQuiet(hung)
	var round atomic.Int64
	var freeTot, hungTot fxTotals
	fair.Run(b, fair.Options{Baseline: "fault-free", GC: true, Ratios: []string{"p99-ns"}},
		fxHungSystem(b, "fault-free", free, &round, nil, &freeTot),
		fxHungSystem(b, "hung", hung, &round, logs, &hungTot))
	// Over all blocks: the longest wait, how long the hung node held up
	// its first Gets, and the log rate over the whole outage.
	b.ReportMetric(float64(freeTot.maxLat.Nanoseconds()), "fault-free-max-latency-ns")
	b.ReportMetric(float64(hungTot.maxLat.Nanoseconds()), "hung-max-latency-ns")
	if fe := logs.firstEject.Load(); fe != 0 {
		b.ReportMetric(float64(fe-hungTot.first), "hung-first-eject-after-ns")
	}
	b.ReportMetric(float64(hungTot.lines)/hungTot.seconds, "hung-log-lines/s-all-blocks")
	b.Logf("hung cluster: node A's log lines by message and peer (hung node %s): %v", hung.nodes[2].addr, logs.byKind())
	hung.nodes[2].hung.close() // the fault ends
	free.closeIdle()
	hung.closeIdle()
	g1, f1, _ := fxSettle(g0, f0, 3*time.Second)
	b.ReportMetric(float64(g1-g0), "end-goroutines-delta")
	b.ReportMetric(float64(f1-f0), "end-fds-delta")
	b.ReportMetric(float64(hung.nodes[2].hung.requests.Load()), "hung-requests")
}

// TestHungPeerHarness runs a few blocks of the hung-peer comparison's
// systems and checks that every Get was answered with its key's value
// (fxGets counts failures and wrong values) and that the hung cluster's
// node A ejected the hung node.
func TestHungPeerHarness(t *testing.T) {
	logs := &fxLogCount{}
	opts := cache.GroupOptions{PeerPolicy: cache.PeerPolicy{HedgeMin: time.Millisecond, HedgeMax: time.Millisecond,
		SlowAfter: 20 * time.Millisecond}}
	hung := newFxCluster(t, 3, fxConfig{getter: &fxSource{}, opts: opts, logs: logs, hung: map[int]bool{2: true}})
	keys := make([]string, 300)
	for i := range keys {
		keys[i] = fmt.Sprintf("t/k%d", i)
	}
	res := fxGets(hung.nodes[0].group, keys, 8)
	if res.failed > 0 || res.wrong > 0 {
		t.Fatalf("%d Gets failed, %d wrong values; first error: %v", res.failed, res.wrong, res.err)
	}
	// The fetches the hedges beat fail after SlowAfter; then the hung node
	// is ejected, and the next Gets do not ask it. Bounded: 10 s.
	deadline := time.Now().Add(10 * time.Second)
	for logs.firstEject.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for i := range keys {
		keys[i] = fmt.Sprintf("t/after/k%d", i) // not cached yet
	}
	if res := fxGets(hung.nodes[0].group, keys, 8); res.failed > 0 || res.wrong > 0 {
		t.Fatalf("after the ejection: %d Gets failed, %d wrong values; first error: %v", res.failed, res.wrong, res.err)
	}
	s := hung.nodes[0].group.Stats()
	if s.EjectedLoads == 0 || logs.firstEject.Load() == 0 {
		t.Fatalf("the hung node was not ejected: %+v", s)
	}
	if h := fxHedgeEstimate(res, make([]int, 0)); h != fxHedgeMin {
		t.Fatalf("hedge estimate with no fetches = %v, want the floor %v", h, fxHedgeMin)
	}
}
