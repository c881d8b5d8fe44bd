package bench

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/bench/internal/fair"
	"github.com/geecache/geecache/cache"
)

// fxRemoteSystem is Gets on node A of c of fresh keys that another node
// owns, from clients clients, as a fair.System: a healthy remote fetch,
// answered by the owner's source at once.
func fxRemoteSystem(b *testing.B, name string, c *fxCluster, round *atomic.Int64, clients int) fair.System {
	a := c.nodes[0]
	var keys []string
	return fair.System{
		Name: name,
		Prepare: func(n int) {
			r := round.Add(1)
			keys = keys[:0]
			for i := 0; len(keys) < n; i++ {
				if k := fmt.Sprintf("f%d/k%d", r, i); c.owner(k) != 0 {
					keys = append(keys, k)
				}
			}
		},
		Run: func(n int) fair.Metrics {
			s0 := a.group.Stats()
			res := fxGets(a.group, keys, clients)
			if res.failed > 0 || res.wrong > 0 {
				b.Fatalf("%s: %d of %d Gets failed, %d wrong values; first error: %v", name, res.failed, n, res.wrong, res.err)
			}
			s1 := a.group.Stats()
			lat := fxSorted(res.lat)
			return fair.Metrics{
				"ns/op":  float64(res.elapsed.Nanoseconds()) / float64(n),
				"p50-ns": float64(fxPercentile(lat, 50)),
				"p99-ns": float64(fxPercentile(lat, 99)),
				"hedges": float64(s1.Hedges - s0.Hedges),
				// Gets not answered by the owner (a hedge won, or the
				// owner was ejected): a local load, which flatters ns/op.
				"local-loads":   float64(s1.LocalLoads - s0.LocalLoads),
				"ejected-loads": float64(s1.EjectedLoads - s0.EjectedLoads),
				"ejections":     float64(fxEjections(s1) - fxEjections(s0)),
			}
		},
	}
}

// BenchmarkHedgeCost compares a healthy remote fetch (node A of a
// three-node cluster gets fresh keys another node owns; the owner's
// source answers at once) with the default PeerPolicy (peer health,
// in-flight caps, hedging) against the same with PeerPolicy{NoHedge:
// true}, in alternating blocks: the cost of the resilience machinery on
// the path every remote Get takes. A third system, hedge-at-1s, has the
// hedge delay fixed at 1 s, so that no hedge fires: the machinery's cost
// alone (health, in-flight count, the hedge timer), when a loaded machine
// makes fetches slower than the default 10 ms floor. c64 and c1: 64 and 1 clients.
// Metrics: ns/op, p50-ns, p99-ns, cpu-ns/op, allocs/op and B/op (both
// ends), and hedges (per block: should be 0, the fetches being far
// quicker than the 10 ms floor of the hedge delay), local-loads (Gets a
// hedge or an ejection answered locally instead of the owner),
// ejected-loads and ejections, per block.
func BenchmarkHedgeCost(b *testing.B) {
	hedged := newFxCluster(b, 3, fxConfig{getter: &fxSource{}})
	slow := newFxCluster(b, 3, fxConfig{getter: &fxSource{}, opts: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{HedgeMin: time.Second, HedgeMax: time.Second}}})
	plain := newFxCluster(b, 3, fxConfig{getter: &fxSource{}, opts: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	var round atomic.Int64
	for _, clients := range []int{64, 1} {
		b.Run(fmt.Sprintf("c%d", clients), func(b *testing.B) {
			fair.Run(b, fair.Options{Baseline: "no-hedge", Mem: true, GC: true, CPU: true, Ratios: []string{"p50-ns"}},
				fxRemoteSystem(b, "hedged", hedged, &round, clients),
				fxRemoteSystem(b, "hedge-at-1s", slow, &round, clients),
				fxRemoteSystem(b, "no-hedge", plain, &round, clients))
		})
	}
}

// fxEjections returns the ejections of every peer in s.
func fxEjections(s cache.Stats) int64 {
	var n int64
	for _, p := range s.Peers {
		n += p.Ejections
	}
	return n
}
