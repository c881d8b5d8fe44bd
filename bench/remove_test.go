package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/bench/internal/fair"
)

// fxSpan is when a request was sent and its response received.
type fxSpan struct{ start, end time.Time }

// fxRecRT is an http.RoundTripper that records the spans of the DELETE
// requests it sends while recording.
type fxRecRT struct {
	next   *http.Transport
	mu     sync.Mutex
	spans  []fxSpan
	record bool
}

func (t *fxRecRT) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	if r.Method == http.MethodDelete {
		t.mu.Lock()
		if t.record {
			t.spans = append(t.spans, fxSpan{start, time.Now()})
		}
		t.mu.Unlock()
	}
	return resp, err
}

// CloseIdleConnections closes the idle connections of the transport.
func (t *fxRecRT) CloseIdleConnections() { t.next.CloseIdleConnections() }

// take stops recording and returns the spans recorded, or with on, clears
// them and starts.
func (t *fxRecRT) take(on bool) []fxSpan {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.spans
	t.spans, t.record = nil, on
	return s
}

// fxRoundTrips returns the number of sequential rounds in spans: the
// longest chain of spans each of which began after the one before it
// ended.
func fxRoundTrips(spans []fxSpan) int {
	slices.SortFunc(spans, func(a, b fxSpan) int { return a.start.Compare(b.start) })
	depth := make([]int, len(spans))
	best := 0
	for i, s := range spans {
		depth[i] = 1
		for j := range i {
			if !spans[j].end.After(s.start) {
				depth[i] = max(depth[i], depth[j]+1)
			}
		}
		best = max(best, depth[i])
	}
	return best
}

// fxRemoveCluster returns a three-node cluster whose node A records the
// DELETE requests it sends.
func fxRemoveCluster(tb testing.TB) (*fxCluster, *fxRecRT) {
	rt := &fxRecRT{next: nethttp.NewTransport()}
	return newFxCluster(tb, 3, fxConfig{getter: &fxSource{}, transport: rt}), rt
}

// fxRemoveSystem is, on node A of c, one at a time: with remove, n
// Removes of keys another node owns (warmed first: loaded at the owner,
// with a hot copy on A) or, with own, that A owns (warmed on A and
// fetched by the others); else n Gets of fresh keys another node owns
// (one remote fetch each). For Removes it reports the DELETE requests
// the nodes served per Remove and the sequential round trips per Remove
// (min, median and max) from the times node A sent each DELETE and got its
// answer (rt): two requests in flight together are one round.
func fxRemoveSystem(b testing.TB, name string, c *fxCluster, rt *fxRecRT, round *atomic.Int64, remove, own bool) fair.System {
	a := c.nodes[0]
	var keys []string
	ctx := context.Background()
	return fair.System{
		Name: name,
		Prepare: func(n int) {
			r := round.Add(1)
			keys = keys[:0]
			for i := 0; len(keys) < n; i++ {
				if k := fmt.Sprintf("d%d/k%d", r, i); (c.owner(k) == 0) == own {
					keys = append(keys, k)
				}
			}
			if !remove {
				return
			}
			for _, k := range keys {
				for i, nd := range c.nodes {
					if i == 0 || own {
						if _, err := nd.group.Get(ctx, k); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
		},
		Run: func(n int) fair.Metrics {
			lat := make([]time.Duration, n)
			var windows [][2]time.Time
			var served [3]int64
			if remove {
				for i, nd := range c.nodes {
					served[i] = nd.deletes.Load()
				}
				rt.take(true)
			}
			t0 := time.Now()
			for i, k := range keys {
				s := time.Now()
				var err error
				if remove {
					err = a.group.Remove(ctx, k)
				} else {
					_, err = a.group.Get(ctx, k)
				}
				lat[i] = time.Since(s)
				windows = append(windows, [2]time.Time{s, s.Add(lat[i])})
				if err != nil {
					b.Fatalf("%s(%q): %v", name, k, err)
				}
			}
			elapsed := time.Since(t0)
			m := fair.Metrics{
				"ns/op":  float64(elapsed.Nanoseconds()) / float64(n),
				"p50-ns": float64(fxPercentile(fxSorted(lat), 50)),
				"p99-ns": float64(fxPercentile(fxSorted(lat), 99)),
			}
			if remove {
				spans := rt.take(false)
				for i, nd := range c.nodes {
					served[i] = nd.deletes.Load() - served[i]
				}
				m["a-deletes/op"] = float64(served[0]) / float64(n)
				m["peer-deletes/op"] = float64(served[1]+served[2]) / float64(n)
				trips := make([]time.Duration, 0, n) // round trips, as durations for fxPercentile
				for _, w := range windows {
					var in []fxSpan
					for _, s := range spans {
						if !s.start.Before(w[0]) && !s.end.After(w[1]) {
							in = append(in, s)
						}
					}
					trips = append(trips, time.Duration(fxRoundTrips(in)))
				}
				trips = fxSorted(trips)
				m["round-trips-min"] = float64(trips[0])
				m["round-trips-max"] = float64(fxPercentile(trips, 100))
				m["round-trips-med"] = float64(fxPercentile(trips, 50))
			}
			return m
		},
	}
}

// BenchmarkRemove compares, on node A of a three-node loopback cluster,
// one at a time: Group.Remove of a key another node owns (remove), of a
// key A owns (remove-own), and a Get of a fresh key another node owns
// (remote-get, the baseline: one peer round trip), in alternating
// blocks. Metrics: ns/op, p50-ns, p99-ns and their ratios to remote-get;
// for Removes, peer-deletes/op (DELETE requests the other two nodes
// served per Remove), a-deletes/op, and round-trips-max and -med
// (sequential rounds of DELETEs per Remove, from when node A sent each
// and got its answer; -min too).
func BenchmarkRemove(b *testing.B) {
	c, rt := fxRemoveCluster(b)
	var round atomic.Int64
	fair.Run(b, fair.Options{Baseline: "remote-get", GC: true, Ratios: []string{"p50-ns"}},
		fxRemoveSystem(b, "remote-get", c, rt, &round, false, false),
		fxRemoveSystem(b, "remove", c, rt, &round, true, false),
		fxRemoveSystem(b, "remove-own", c, rt, &round, true, true))
}

// TestRemoveHarness runs a block of each system of BenchmarkRemove and
// checks what a Remove reports: one DELETE at each other node and none at
// A, and for a key another node owns, at least two sequential rounds (the
// owner's answer comes before the others are asked; whether the other two
// overlap depends on scheduling, so the count is not asserted further).
func TestRemoveHarness(t *testing.T) {
	c, rt := fxRemoveCluster(t)
	var round atomic.Int64
	for _, tc := range []struct {
		own   bool
		trips float64
	}{{false, 2}, {true, 1}} {
		s := fxRemoveSystem(t, "remove", c, rt, &round, true, tc.own)
		s.Prepare(20)
		m := s.Run(20)
		if m["peer-deletes/op"] != 2 || m["a-deletes/op"] != 0 || m["round-trips-min"] < tc.trips {
			t.Errorf("own=%v: %v; want 2 peer DELETEs and at least %v round trips per Remove", tc.own, m, tc.trips)
		}
	}
	g := fxRemoveSystem(t, "remote-get", c, rt, &round, false, false)
	g.Prepare(5)
	g.Run(5)
}
