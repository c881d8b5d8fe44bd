package bench

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/bench/internal/fair"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The batch workload: a page of batchPage keys owned by the
// other nodes of a cluster, cold on the asking node 0 (fresh keys each
// block), warm on their owners; GetMany against a loop of single Gets.
const batchPage = 100

// batchCluster is n GeeCache nodes whose servers count the peer requests
// they get.
type batchCluster struct {
	nodes []*ourNode
	reqs  atomic.Int64
	round atomic.Int64
}

// newBatchCluster starts n nodes; with a secret (nil: none) they sign
// their requests, and take writes (a Purge).
func newBatchCluster(tb testing.TB, n int, budget int64, g getter.Getter, secret []byte) *batchCluster {
	c := &batchCluster{}
	var addrs []string
	for range n {
		ln := listenLoopback(tb)
		addrs = append(addrs, "http://"+ln.Addr().String())
		c.nodes = append(c.nodes, &ourNode{ln: ln, done: make(chan struct{})})
	}
	for i, nd := range c.nodes {
		reg := cache.NewRegistry()
		pool, err := nethttp.NewPool(addrs[i], reg, &nethttp.PoolOptions{Logger: quietLog(), Cluster: nethttp.Cluster{Secret: secret}})
		if err != nil {
			tb.Fatal(err)
		}
		nd.pool, nd.reg, nd.group = pool, reg, newGeeGroupOn(tb, reg, httpGroup, budget, g, pool)
		if err := pool.Set(addrs...); err != nil {
			tb.Fatal(err)
		}
		nd.srv = nethttp.NewServer("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.reqs.Add(1)
			pool.ServeHTTP(w, r)
		}), nil)
		go func() {
			defer close(nd.done)
			_ = nd.srv.Serve(nd.ln)
		}()
	}
	tb.Cleanup(func() {
		for _, nd := range c.nodes {
			_ = nd.srv.Close()
			<-nd.done
			_ = nd.pool.Close()
		}
	})
	return c
}

// pages returns n pages of fresh keys that node 0 does not own, warm on
// their owners.
func (c *batchCluster) pages(tb testing.TB, n, size int) [][]string {
	a := c.nodes[0]
	owners := map[string]*cache.Registry{}
	for _, nd := range c.nodes {
		owners[nd.pool.Self()] = nd.reg
	}
	r := c.round.Add(1)
	out := make([][]string, n)
	i := 0
	for p := range out {
		for len(out[p]) < size {
			k := fmt.Sprintf("r%d-k%d", r, i)
			i++
			if o := a.pool.Owner(k); o != a.pool.Self() {
				if err := warmHere(tb.Context(), owners[o], httpGroup, k); err != nil {
					tb.Fatal(err)
				}
				out[p] = append(out[p], k)
			}
		}
	}
	return out
}

// pageSystems are GetMany and a loop of Gets over pages, from clients
// goroutines; an operation is one page.
func pageSystems(tb testing.TB, c *batchCluster, clients int) []fair.System {
	g := c.nodes[0].group
	var pages [][]string
	run := func(get func(keys []string) int) func(n int) fair.Metrics {
		return func(n int) fair.Metrics {
			var next atomic.Int64
			var bad atomic.Int64
			req0 := c.reqs.Load()
			var wg sync.WaitGroup
			for range clients {
				wg.Go(func() {
					for {
						p := int(next.Add(1)) - 1
						if p >= n {
							return
						}
						if get(pages[p]) != len(pages[p]) {
							bad.Add(1)
						}
					}
				})
			}
			wg.Wait()
			if bad.Load() != 0 {
				tb.Fatalf("%d pages with a wrong value", bad.Load())
			}
			return fair.Metrics{"peer-reqs/op": float64(c.reqs.Load()-req0) / float64(n)}
		}
	}
	prep := func(n int) { pages = c.pages(tb, n, batchPage) }
	ctx := tb.Context()
	return []fair.System{
		{Name: "getmany", Prepare: prep, Run: run(func(keys []string) int {
			ok := 0
			g.GetMany(ctx, keys, func(i int, v cache.ByteView, err error) {
				if err == nil && v.Len() == hitValueLen {
					ok++
				}
			})
			return ok
		})},
		{Name: "loop", Prepare: prep, Run: run(func(keys []string) int {
			ok := 0
			for _, k := range keys {
				if v, err := g.Get(ctx, k); err == nil && v.Len() == hitValueLen {
					ok++
				}
			}
			return ok
		})},
	}
}

// BenchmarkGetMany compares a page of 100 remote keys fetched with GetMany
// against a loop of 100 Gets, at 64 clients (throughput) and 1 client, and
// at 1 client against one remote Get (latency: getmany/get1).
// Run: go test -run='^$' -bench=GetMany -benchtime=200x
func BenchmarkGetMany(b *testing.B) {
	for _, clients := range []int{64, 1} {
		b.Run(fmt.Sprint("c", clients), func(b *testing.B) {
			c := newBatchCluster(b, 3, httpBudget, cheapGetter, nil)
			systems := pageSystems(b, c, clients)
			if clients == 1 {
				g := c.nodes[0].group
				var keys []string
				systems = append(systems, fair.System{Name: "get1",
					Prepare: func(n int) {
						keys = keys[:0]
						for _, p := range c.pages(b, n, 1) {
							keys = append(keys, p[0])
						}
					},
					Run: func(n int) fair.Metrics {
						req0 := c.reqs.Load()
						for _, k := range keys[:n] {
							if v, err := g.Get(b.Context(), k); err != nil || v.Len() != hitValueLen {
								b.Fatalf("Get(%s) = %d bytes, %v", k, v.Len(), err)
							}
						}
						return fair.Metrics{"peer-reqs/op": float64(c.reqs.Load()-req0) / float64(n)}
					}})
			}
			fair.Run(b, fair.Options{Baseline: "getmany", Mem: true, GC: true, CPU: true, Ratios: []string{"peer-reqs/op"}}, systems...)
		})
	}
}

// A page of 100 remote keys over 3 nodes takes at most 2 peer requests
// from the asking node, one per other owner, and every value is right.
func TestGetManyPeerRequests(t *testing.T) {
	c := newBatchCluster(t, 3, httpBudget, cheapGetter, nil)
	page := c.pages(t, 1, batchPage)[0]
	req0 := c.reqs.Load()
	ok := 0
	c.nodes[0].group.GetMany(t.Context(), page, func(i int, v cache.ByteView, err error) {
		if err == nil && v.EqualBytes(hitValue(page[i])) {
			ok++
		}
	})
	if n := c.reqs.Load() - req0; ok != len(page) || n > 2 {
		t.Fatalf("%d of %d values right, %d peer requests; want all, and at most 2", ok, len(page), n)
	}
}

// BenchmarkPurge1M purges a group of 1M entries spread over 5 nodes: one
// request to each of the 4 peers, in time independent of the entries.
// Run: go test -run='^$' -bench=Purge1M -benchtime=3x
func BenchmarkPurge1M(b *testing.B) {
	const entries, nodes = 1 << 20, 5
	c := newBatchCluster(b, nodes, 1<<30, getter.Func(func(_ context.Context, k string) ([]byte, error) { return []byte(k), nil }), []byte("bench"))
	var reqs, ns, freed float64
	for i := range b.N {
		b.StopTimer()
		for j := range entries {
			nd := c.nodes[j%nodes]
			if err := warmHere(b.Context(), nd.reg, httpGroup, fmt.Sprint("p", i, "-", j)); err != nil {
				b.Fatal(err)
			}
		}
		held := int64(0)
		for _, nd := range c.nodes {
			held += nd.group.Stats().Main.Items
		}
		if held != entries {
			b.Fatalf("the nodes hold %d entries, want %d", held, entries)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		req0 := c.reqs.Load()
		b.StartTimer()
		start := time.Now()
		if err := c.nodes[0].group.Purge(b.Context()); err != nil {
			b.Fatal(err)
		}
		ns += float64(time.Since(start))
		b.StopTimer()
		reqs += float64(c.reqs.Load() - req0)
		for _, nd := range c.nodes {
			if s := nd.group.Stats(); s.Main.Items+s.Hot.Items != 0 {
				b.Fatalf("%s holds %d entries after Purge", nd.pool.Self(), s.Main.Items+s.Hot.Items)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		freed += float64(int64(before.HeapInuse)-int64(after.HeapInuse)) / (1 << 20)
	}
	b.ReportMetric(reqs/float64(b.N), "peer-reqs/op")
	b.ReportMetric(ns/float64(b.N), "purge-ns/op")
	b.ReportMetric(freed/float64(b.N), "MiB-freed/op")
}

// BenchmarkGetManyProfile runs GetMany of one 100-key page alone, from one
// client, for a profile of the batch path (the pages are made before the
// timer starts, so the profile has their making too, at its start).
func BenchmarkGetManyProfile(b *testing.B) {
	c := newBatchCluster(b, 3, httpBudget, cheapGetter, nil)
	g := c.nodes[0].group
	pages := c.pages(b, b.N, batchPage)
	b.ResetTimer()
	for i := range b.N {
		g.GetMany(b.Context(), pages[i], func(int, cache.ByteView, error) {})
	}
}
