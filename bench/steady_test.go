package bench

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// BenchmarkSteadyLoads is the whole-budget steady state of the membership
// workload (member_test.go) with every load classified: the cluster of
// rollingRestart, prewarmed so that every key is held, its clients warmed
// up as long as the roll's (15 s), then 20 s in which every call of a
// node's Getter is recorded with what made it (the caller's stack and
// context) and every group's Stats are compared before and after. It
// answers why a cluster that holds every key still loads (bench/README.md,
// "Membership changes", "The steady loads of a whole budget"). default is
// that steady state; each other variant changes one thing, to test a
// cause: nohedge (PeerPolicy.NoHedge), long (a 60 s window),
// warm-every-node (every node asked for every key before the clients
// start) and 4-clients (4 closed-loop clients instead of 32).
// Run it with -v: each run logs its breakdown.
func BenchmarkSteadyLoads(b *testing.B) {
	for _, v := range []struct {
		name   string
		policy cache.PeerPolicy
	}{
		{"default", cache.PeerPolicy{}},
		{"nohedge", cache.PeerPolicy{NoHedge: true}},
		{"long", cache.PeerPolicy{}},
		{"warm-every-node", cache.PeerPolicy{}},
		{"warm-every-node-get", cache.PeerPolicy{}},
		{"4-clients", cache.PeerPolicy{}},
	} {
		b.Run(v.name, func(b *testing.B) {
			window := 20 * time.Second
			if v.name == "long" {
				window = 60 * time.Second // how the "steady" rate goes on after the roll's 15 s + 5 s
			}
			for range b.N {
				cfg := mbConfigFor(false, mbWhole)
				if v.name == "4-clients" {
					cfg.clients = 4 // a machine less busy: fewer closed-loop clients on its 2 cores
				}
				warmAll := map[string]int{"warm-every-node": slWarmGetMany, "warm-every-node-get": slWarmGet}[v.name]
				steadyLoads(b, cfg, v.policy, 15*time.Second, window, warmAll)
			}
		})
	}
}

// slSegment is the step in which the window's fetches and hedges are told.
const slSegment = 5 * time.Second

// The kinds of a load, by what called the Getter.
const (
	slHedge   = "hedge"        // the local load beside a slow fetch (hedgeLoader)
	slBusy    = "busy"         // the owner had MaxInFlight fetches in flight (forwardLoader, no hedge)
	slPeerReq = "peer-request" // a peer's Get, served by ServePeer (the load's context is an HTTP request's)
	slOwner   = "owner-get"    // a client's Get at the key's owner (localLoader)
	slElse    = "elsewhere"    // a client's Get at a non-owner loading locally (ejected or failed owner)
	slOther   = "other"
)

// slLoad is one call of a node's Getter.
type slLoad struct {
	at          time.Duration // since the window began
	node        int
	key         int
	kind        string
	owner       bool  // the loading node owns the key by its ring
	prior       int32 // the key's loads, cluster-wide, before this one
	priorHere   int32 // the key's loads on this node before this one
	sinceAsked  time.Duration
	sinceLoaded time.Duration // since the key's previous load anywhere (0: none)
}

type slRecorder struct {
	c       *mbCluster
	begin   atomic.Int64 // Unix ns; 0: not recording
	addrs   sync.Map     // addr -> node index
	next    atomic.Int32
	perNode [][]atomic.Int32 // per node, per key: loads
	last    []atomic.Int64   // per key: Unix ns of the last load
	clients atomic.Pointer[mbClients]
	began   int64 // the window's start, Unix ns
	mu      sync.Mutex
	loads   []slLoad
}

func (r *slRecorder) index(addr string) int {
	if i, ok := r.addrs.Load(addr); ok {
		return i.(int)
	}
	i, _ := r.addrs.LoadOrStore(addr, int(r.next.Add(1)-1))
	return i.(int)
}

// kindOf names what called the Getter, from the stack and the context.
func kindOf(ctx context.Context) string {
	var pcs [48]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var fns []string
	for {
		f, more := frames.Next()
		fns = append(fns, f.Function)
		if !more {
			break
		}
	}
	all := strings.Join(fns, " ")
	switch {
	case strings.Contains(all, "(*hedgeLoader).Load"):
		return slHedge
	case strings.Contains(all, "(*forwardLoader).Load"):
		return slBusy
	case ctx.Value(http.ServerContextKey) != nil:
		return slPeerReq
	case strings.Contains(all, "(*localLoader).Load"):
		return "local"
	}
	return slOther
}

func (r *slRecorder) tune(addr string, g getter.Getter, o *cache.GroupOptions, policy cache.PeerPolicy) getter.Getter {
	o.PeerPolicy = policy
	node := r.index(addr)
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		var id int
		if _, err := fmt.Sscanf(key, "k%06d", &id); err == nil && id < len(r.last) {
			now := time.Now().UnixNano()
			prior := r.c.src.perKey[id].Load()
			here := r.perNode[node][id].Add(1) - 1
			prev := r.last[id].Swap(now)
			if b := r.begin.Load(); b != 0 {
				l := slLoad{at: time.Duration(now - b), node: node, key: id, kind: kindOf(ctx), prior: prior, priorHere: here}
				if n := r.c.nodeAt(addr); n != nil {
					l.owner = n.pool.Owner(key) == addr
				}
				if l.kind == "local" {
					l.kind = slElse
					if l.owner {
						l.kind = slOwner
					}
				}
				if a := r.asked(id); a != 0 {
					l.sinceAsked = time.Duration(now - a)
				}
				if prev != 0 {
					l.sinceLoaded = time.Duration(now - prev)
				}
				r.mu.Lock()
				r.loads = append(r.loads, l)
				r.mu.Unlock()
			}
		}
		return g.Get(ctx, key)
	})
}

// asked is set once the clients run: the Unix ns of key id's last Get.
func (r *slRecorder) asked(id int) int64 {
	if cl := r.clients.Load(); cl != nil {
		return cl.asked[id].Load()
	}
	return 0
}

// nodeAt returns the live node at addr, or nil.
func (c *mbCluster) nodeAt(addr string) *mbNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[addr]
}

// How steadyLoads warms every node after the prewarm of rollingRestart.
const (
	slWarmOwners  = iota // not: each key is held by its owner (and the node it was asked through)
	slWarmGetMany        // a GetMany of every key on every node, 500 keys a call
	slWarmGet            // a Get of every key on every node
)

// steadyLoads runs one steady state; with everyNode (slWarmGetMany,
// slWarmGet), the prewarm is followed by every node being asked for every
// key, so that each holds every key (its own in main, the others' in hot)
// before the clients start.
func steadyLoads(b *testing.B, cfg mbConfig, policy cache.PeerPolicy, warm, window time.Duration, everyNode int) {
	r := &slRecorder{}
	r.perNode = make([][]atomic.Int32, cfg.nodes)
	for i := range r.perNode {
		r.perNode[i] = make([]atomic.Int32, cfg.keys)
	}
	r.last = make([]atomic.Int64, cfg.keys)
	c := newMBClusterTuned(b, cfg.nodes, cfg.keys, cfg.budget, cfg.drain,
		func(addr string, g getter.Getter, o *cache.GroupOptions) getter.Getter {
			return r.tune(addr, g, o, policy)
		})
	r.c = c
	defer c.close()
	t0 := time.Now()
	c.prewarm(cfg.keys, 32) // as rollingRestart, whatever the clients
	pw := slStats(c)
	b.Logf("prewarm: %v, %d loads for %d keys; held: main %d items (%d B), hot %d items (%d B); evictions main %d hot %d",
		time.Since(t0).Round(time.Millisecond), c.src.total(), cfg.keys, pw.Main.Items, pw.Main.Bytes, pw.Hot.Items, pw.Hot.Bytes,
		pw.Main.Evictions, pw.Hot.Evictions)
	if everyNode != slWarmOwners {
		t1, l1, p0 := time.Now(), c.src.total(), slStats(c)
		how := "GetMany"
		if everyNode == slWarmGet {
			how = "Get"
			c.prewarmEveryNodeGet(cfg.keys, 32)
		} else {
			c.prewarmEveryNode(cfg.keys, 32)
		}
		pw := slStats(c)
		b.Logf("prewarm of every node (%s): %v, %d loads (Hedges %d, HedgeWins %d, LocalLoads %d, PeerLoads %d, LoadErrors %d); held: main %d items, hot %d items",
			how,
			time.Since(t1).Round(time.Millisecond), c.src.total()-l1, pw.Hedges-p0.Hedges, pw.HedgeWins-p0.HedgeWins,
			pw.LocalLoads-p0.LocalLoads, pw.PeerLoads-p0.PeerLoads, pw.LoadErrors-p0.LoadErrors, pw.Main.Items, pw.Hot.Items)
	}
	cl := c.clients(cfg.clients, cfg.keys)
	r.clients.Store(cl)
	time.Sleep(warm)
	s0, g0, h0 := slStats(c), cl.gets.Load(), readSched()
	var gc0 runtime.MemStats
	runtime.ReadMemStats(&gc0)
	r.began = time.Now().UnixNano()
	r.begin.Store(r.began)
	// The window in segments of 5 s: how the remote fetches (first Gets of
	// a key on a node that does not hold it) and the hedges go on.
	prev, pg := s0, g0
	for seg := time.Duration(0); seg < window; seg += slSegment {
		time.Sleep(min(slSegment, window-seg))
		s, g := slStats(c), cl.gets.Load()
		f, h := s.PeerLoads-prev.PeerLoads, s.Hedges-prev.Hedges
		b.Logf("  segment +%v: %d Gets, %d remote fetches (%.0f/s), %d hedges (%.1f/s, %.2f%% of the fetches), hot %d items",
			seg+min(slSegment, window-seg), g-pg, f, float64(f)/slSegment.Seconds(), h, float64(h)/slSegment.Seconds(),
			100*float64(h)/float64(max(f, 1)), s.Hot.Items)
		prev, pg = s, g
	}
	r.begin.Store(0)
	s1, g1, h1 := slStats(c), cl.gets.Load(), readSched()
	var gc1 runtime.MemStats
	runtime.ReadMemStats(&gc1)
	cl.end()
	secs := window.Seconds()

	r.mu.Lock()
	loads := append([]slLoad(nil), r.loads...)
	r.mu.Unlock()
	byKind := map[string]int{}
	var ownerRe, reloads, ownerHeld, never int
	for _, l := range loads {
		byKind[l.kind]++
		if l.prior > 0 {
			reloads++
		}
		if l.owner && l.priorHere > 0 {
			ownerRe++ // the owner loads a key it had loaded before
		}
		if l.owner {
			ownerHeld++
		}
		if l.prior == 0 {
			never++
		}
	}
	d := func(f func(cache.Stats) int64) float64 { return float64(f(s1)-f(s0)) / secs }
	b.Logf("window %v: %d Gets (%.0f/s), %d loads (%.1f/s)", window, g1-g0, float64(g1-g0)/secs, len(loads), float64(len(loads))/secs)
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		b.Logf("  loads by kind %-13s %6d (%.1f/s)", k, byKind[k], float64(byKind[k])/secs)
		b.ReportMetric(float64(byKind[k])/secs, k+"-loads/s")
	}
	b.Logf("  loads of keys loaded before: %d (at their owner, of a key it loaded before: %d); loads at the owner: %d; keys never loaded before: %d",
		reloads, ownerRe, ownerHeld, never)
	b.Logf("  stats deltas per s: PeerLoads %.1f PeerErrors %.2f Hedges %.1f HedgeWins %.1f PeerBusy %.2f EjectedLoads %.2f FallbackLoads %.2f NextPeer %.2f Abandoned %.2f LocalLoads %.1f PeerRequests %.1f",
		d(func(s cache.Stats) int64 { return s.PeerLoads }), d(func(s cache.Stats) int64 { return s.PeerErrors }),
		d(func(s cache.Stats) int64 { return s.Hedges }), d(func(s cache.Stats) int64 { return s.HedgeWins }),
		d(func(s cache.Stats) int64 { return s.PeerBusy }), d(func(s cache.Stats) int64 { return s.EjectedLoads }),
		d(func(s cache.Stats) int64 { return s.FallbackLoads }), d(func(s cache.Stats) int64 { return s.NextPeer }),
		d(func(s cache.Stats) int64 { return s.Abandoned }), d(func(s cache.Stats) int64 { return s.LocalLoads }),
		d(func(s cache.Stats) int64 { return s.PeerRequests }))
	b.Logf("  evictions main %d hot %d; refreshes %d stale serves %d; handoffs %d misses %d; ejections %d; load errors %d",
		s1.Main.Evictions-s0.Main.Evictions, s1.Hot.Evictions-s0.Hot.Evictions, s1.Refreshes-s0.Refreshes,
		s1.StaleServes-s0.StaleServes, s1.Handoffs-s0.Handoffs, s1.HandoffMisses-s0.HandoffMisses, slEjections(s1)-slEjections(s0),
		s1.LoadErrors-s0.LoadErrors)
	b.Logf("  held at the end: main %d items (%d B), hot %d items (%d B) of %d B per node",
		s1.Main.Items, s1.Main.Bytes, s1.Hot.Items, s1.Hot.Bytes, cfg.budget)
	p99, top := schedP99(h0, h1)
	b.Logf("  machine: scheduling latency p99 %.2g s, largest %.2g s; %d GCs, pause total %v",
		p99, top, gc1.NumGC-gc0.NumGC, time.Duration(gc1.PauseTotalNs-gc0.PauseTotalNs))
	slBursts(b, loads, r.began, &gc1)
	for i, l := range loads {
		if i >= 12 {
			break
		}
		b.Logf("  e.g. +%v node %d key %d %s owner=%v prior=%d here=%d since-asked=%v since-loaded=%v",
			l.at.Round(time.Millisecond), l.node, l.key, l.kind, l.owner, l.prior, l.priorHere,
			l.sinceAsked.Round(time.Microsecond), l.sinceLoaded.Round(time.Millisecond))
	}
	b.ReportMetric(float64(len(loads))/secs, "steady-loads/s")
	b.ReportMetric(100*float64(s1.Hedges-s0.Hedges)/float64(max(s1.PeerLoads-s0.PeerLoads, 1)), "hedges/100-fetches")
	b.ReportMetric(d(func(s cache.Stats) int64 { return s.PeerLoads }), "peer-fetches/s")
	b.ReportMetric(d(func(s cache.Stats) int64 { return s.Hedges }), "hedges/s")
	b.ReportMetric(float64(s1.Main.Evictions-s0.Main.Evictions+s1.Hot.Evictions-s0.Hot.Evictions), "evictions")
	b.ReportMetric(p99*1e3, "sched-p99-ms")
	b.ReportMetric(float64(g1-g0)/secs, "gets/s")
}
