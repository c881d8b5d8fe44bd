package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/bench/internal/fair"
	"github.com/geecache/geecache/getter"
)

// The large-value comparison: every key's value is the same 1 MiB.
const (
	largeValueLen = 1 << 20
	// largeMaxBlock bounds a block of large-value requests: the owners
	// hold a whole block's values (fresh keys, loaded before the block),
	// so a block of n requests keeps n MiB alive.
	largeMaxBlock = 1024
	// largeBudget lets a node hold two blocks' values; only what was
	// loaded is allocated.
	largeBudget = 2 * largeMaxBlock * (largeValueLen + 64)
)

// largeValue is the 1 MiB value of every key (built once, never written).
var largeValue = sync.OnceValue(func() []byte {
	v := make([]byte, largeValueLen)
	for i := range v {
		v[i] = byte(i * 7)
	}
	return v
})

// largeGetter answers every key with largeValue; the group keeps a copy.
var largeGetter = getter.Func(func(context.Context, string) ([]byte, error) { return largeValue(), nil })

// remoteCase is one comparison of BenchmarkRemoteFetch.
type remoteCase struct {
	clients  int
	valueLen int
	// ownerWarm loads the keys into their owners before each block, so
	// that a request is one remote fetch answered from the owner's
	// memory; else the owner loads each key from its Getter.
	ownerWarm bool
}

// remoteSystem is target t as a fair.System: each block gets n fresh
// keys that the asked node does not own, from c.clients goroutines.
func remoteSystem(b *testing.B, name string, t *httpTarget, round *atomic.Int64, c remoteCase) fair.System {
	var keys []string
	return fair.System{
		Name: name,
		Prepare: func(n int) {
			if c.valueLen == largeValueLen && n > largeMaxBlock {
				b.Fatalf("a block of %d requests of 1 MiB values is over %d; run with -benchtime=200x", n, largeMaxBlock)
			}
			if t.forget != nil && keys != nil {
				t.forget(keys)
			}
			if t.activate != nil {
				t.activate()
			}
			keys = remoteKeys(t, round, n)
			if c.ownerWarm {
				if err := t.warmOwners(b.Context(), keys); err != nil {
					b.Fatalf("%s: warming the owners: %v", name, err)
				}
			}
		},
		Run: func(n int) fair.Metrics {
			var other0 time.Duration
			if t.otherCPU != nil {
				other0 = t.otherCPU()
			}
			self0 := fair.CPUTime()
			res := httpLoad(t, keys, c.clients, c.valueLen)
			cpu := fair.CPUTime() - self0
			if t.otherCPU != nil {
				cpu += t.otherCPU() - other0
			}
			if res.failed > 0 {
				b.Fatalf("%s: %d of %d requests failed; first: %v", name, res.failed, n, res.firstErr)
			}
			if res.peerErrors > 0 {
				b.Fatalf("%s: %d remote fetches failed and were loaded locally", name, res.peerErrors)
			}
			return fair.Metrics{
				// The load alone, without counting the servers'
				// connections before and after it.
				"ns/op":        float64(res.elapsed.Nanoseconds()) / float64(n),
				"p50-ns":       float64(res.percentile(50).Nanoseconds()),
				"p99-ns":       float64(res.percentile(99).Nanoseconds()),
				"conns/1k-req": float64(res.conns) * 1000 / float64(n),
				// Local loads started beside a slow fetch (defaults on):
				// each is a fetch the owner did not answer in time.
				"hedges/1k-req": float64(res.hedges) * 1000 / float64(n),
				// Every node's CPU time, in whatever process it runs.
				"cpu-ns/op": float64(cpu.Nanoseconds()) / float64(n),
			}
		},
	}
}

// BenchmarkRemoteFetch measures Gets of keys owned by another node of a
// three-node loopback cluster and cold in the asking node's memory, with
// the systems in alternating blocks (package fair; baseline bare-nethttp,
// a bare net/http server and keep-alive client: the limit).
//
//   - c64, c1: 64 and 1 concurrent clients, 64-byte values, fresh keys
//     that the owner loads from its Getter (as the bare server makes its
//     answer). Systems: GeeCache's nethttp Pool, golang/groupcache's
//     HTTPPool as shipped and with a transport whose keep-alive pool
//     fits the clients, and the bare server.
//   - 1MiB-c1, 1MiB-c4: 1 and 4 clients, 1 MiB values already in their
//     owners' memory (the bare server holds its one value). Systems:
//     GeeCache and the bare server. Run with -benchtime=200x (see
//     largeMaxBlock).
//
// Per request: ns/op (the load's wall time over its requests), p50-ns,
// p99-ns, conns/1k-req (TCP connections the servers accepted), and
// allocs/op and B/op of this process (both ends for GeeCache and the
// bare server; node A only for groupcache, whose other nodes are child
// processes).
func BenchmarkRemoteFetch(b *testing.B) {
	ours := newOurCluster(b, 3).target()
	oursSigned := newOurClusterOf(b, 3, httpBudget, cheapGetter, benchSecret).target()
	gc := newGCCluster(b)
	round := &gc.a.round // fresh keys for groupcache's process-wide group (-count=2)
	bare := newBareServer(b).target()
	oursLarge := newOurClusterOf(b, 3, largeBudget, largeGetter, nil).target()
	oursLargeSigned := newOurClusterOf(b, 3, largeBudget, largeGetter, benchSecret).target()
	bareLarge := newBareServerOf(b, func(string) []byte { return largeValue() }).target()

	small := func(c remoteCase) func(b *testing.B) {
		return func(b *testing.B) {
			systems := []fair.System{
				remoteSystem(b, "geecache", ours, round, c),
				remoteSystem(b, "groupcache", gc.target(), round, c),
				remoteSystem(b, "groupcache-tuned", gc.tunedTarget(), round, c),
				remoteSystem(b, "bare-nethttp", bare, round, c),
			}
			if c.clients == 1 {
				systems = append(systems, remoteSystem(b, "geecache-secret", oursSigned, round, c))
			}
			fair.Run(b, fair.Options{Baseline: "bare-nethttp", Mem: true, GC: true, CPU: true, Ratios: []string{"p50-ns"}}, systems...)
		}
	}
	large := func(c remoteCase) func(b *testing.B) {
		return func(b *testing.B) {
			fair.Run(b, fair.Options{Baseline: "bare-nethttp", Mem: true, GC: true, CPU: true, Ratios: []string{"p50-ns", "B/op"}},
				remoteSystem(b, "geecache", oursLarge, round, c),
				remoteSystem(b, "geecache-secret", oursLargeSigned, round, c),
				remoteSystem(b, "bare-nethttp", bareLarge, round, c))
		}
	}
	b.Run("c64", small(remoteCase{clients: httpClients, valueLen: hitValueLen}))
	b.Run("c1", small(remoteCase{clients: 1, valueLen: hitValueLen}))
	b.Run("1MiB-c1", large(remoteCase{clients: 1, valueLen: largeValueLen, ownerWarm: true}))
	b.Run("1MiB-c4", large(remoteCase{clients: 4, valueLen: largeValueLen, ownerWarm: true}))
}

// TestLargeValueHarness runs a few 1 MiB requests against both systems of
// the large-value comparison and checks every answer's length, that
// GeeCache's asked node fetched each key from a peer, and that the owners
// did not load again after warming.
func TestLargeValueHarness(t *testing.T) {
	const n = 8
	var round atomic.Int64
	ours := newOurClusterOf(t, 3, largeBudget, largeGetter, nil)
	for name, tg := range map[string]*httpTarget{
		"geecache":     ours.target(),
		"bare-nethttp": newBareServerOf(t, func(string) []byte { return largeValue() }).target(),
	} {
		keys := remoteKeys(tg, &round, n)
		if err := tg.warmOwners(t.Context(), keys); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		loads, s0 := ours.ownerLoads(), ours.nodes[0].group.Stats()
		res := httpLoad(tg, keys, 4, largeValueLen)
		if res.failed > 0 {
			t.Errorf("%s: %d of %d requests failed; first: %v", name, res.failed, n, res.firstErr)
		}
		if name == "geecache" {
			if d := ours.ownerLoads() - loads; d != 0 {
				t.Errorf("owners loaded %d keys after warming", d)
			}
			s := ours.nodes[0].group.Stats()
			if err := checkRemoteLoads(n, s.PeerLoads-s0.PeerLoads, s.HedgeWins-s0.HedgeWins); err != nil {
				t.Error(err)
			}
			tg.forget(keys)
			if s := ours.nodes[1].group.Stats(); s.Main.Items != 0 {
				t.Errorf("after forget, node B holds %d items", s.Main.Items)
			}
		}
		tg.closeIdle()
	}
}

// BenchmarkRemoteProfile runs one system of BenchmarkRemoteFetch alone,
// one block of b.N requests, so that a CPU or memory profile
// (-cpuprofile, -memprofile) shows that system's costs only:
//
//	go test -run='^$' -bench='RemoteProfile/geecache/c64' -benchtime=20000x -cpuprofile=cpu.out
//
// Its times are not a comparison (see BenchmarkRemoteFetch for that).
func BenchmarkRemoteProfile(b *testing.B) {
	var round atomic.Int64
	cases := map[string]remoteCase{
		"c64":     {clients: httpClients, valueLen: hitValueLen},
		"c1":      {clients: 1, valueLen: hitValueLen},
		"1MiB-c1": {clients: 1, valueLen: largeValueLen, ownerWarm: true},
	}
	for _, sys := range []string{"geecache", "geecache-secret", "bare-nethttp"} {
		for _, name := range []string{"c64", "c1", "1MiB-c1"} {
			b.Run(sys+"/"+name, func(b *testing.B) {
				c := cases[name]
				var t *httpTarget
				var secret []byte
				if sys == "geecache-secret" {
					secret = benchSecret
				}
				switch {
				case sys != "bare-nethttp" && c.valueLen == largeValueLen:
					t = newOurClusterOf(b, 3, largeBudget, largeGetter, secret).target()
				case sys != "bare-nethttp":
					t = newOurClusterOf(b, 3, httpBudget, cheapGetter, secret).target()
				case c.valueLen == largeValueLen:
					t = newBareServerOf(b, func(string) []byte { return largeValue() }).target()
				default:
					t = newBareServer(b).target()
				}
				s := remoteSystem(b, sys, t, &round, c)
				s.Prepare(b.N)
				b.ReportAllocs()
				b.ResetTimer()
				m := s.Run(b.N)
				b.StopTimer()
				b.ReportMetric(m["cpu-ns/op"], "cpu-ns/op")
				t.closeIdle()
			})
		}
	}
}
