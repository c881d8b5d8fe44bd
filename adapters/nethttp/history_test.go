//go:build !js && !wasip1

package nethttp_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/history"
)

// -history.for runs each history check longer; -history.seed repeats one.
var (
	historyFor     = flag.Duration("history.for", time.Second, "how long each history check runs")
	historySeed    = flag.Uint64("history.seed", 0, "random seed of the history checks (0: a new one each run)")
	historyRounds  = flag.Int("history.rounds", 100, "rounds of TestSetRacingGetsOverHTTP")
	historyMuxHang = flag.Bool("history.muxhang", false, "also run the multiplexed histories with a hanging node")
)

// One Set of a fresh key (its value in the cache only, not in the source)
// races with six Gets of it spread over three nodes, then everything
// stops: every node serves the Set's value afterwards, the owner's and
// every copy. Rounds of it, each with a fresh key, over HTTP/1.1 with a
// cluster secret.
func TestSetRacingGetsOverHTTP(t *testing.T) {
	seed := *historySeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (repeat with -history.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond) // a source of 0-2 ms
		return []byte(history.Initial(key)), nil
	})
	nodes := nethttptest.Start(t, 3, &nethttptest.Options{
		Getter:       func(int) getter.Getter { return src },
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}},
		PoolOptions:  nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte("history secret")}},
	})
	ctx := t.Context()
	stale := 0
	for r := range *historyRounds {
		key, val := fmt.Sprint("race", r), fmt.Sprint("set:", r)
		var wg sync.WaitGroup
		for i := range 6 {
			nd := nodes[i%3]
			d := time.Duration(rng.IntN(3000)) * time.Microsecond
			wg.Go(func() {
				time.Sleep(d) // spreads the Gets around the Set
				_, _ = nd.Group.Get(ctx, key)
			})
		}
		if err := nodes[rng.IntN(3)].Group.Set(ctx, key, []byte(val), 0); err != nil {
			t.Fatalf("round %d: Set: %v", r, err)
		}
		wg.Wait()
		for _, nd := range nodes {
			if v, err := nd.Group.Get(ctx, key); err != nil || v.String() != val {
				stale++
				t.Errorf("round %d: %s serves %q, %v after the Set of %q and the Gets ended", r, nd.Addr, v, err, val)
			}
		}
	}
	t.Logf("%d rounds, %d stale node-keys", *historyRounds, stale)
}

// Concurrent Gets, GetManys, Sets, Removes, RemoveManys and Purges on
// nodes over HTTP/1.1 and multiplexed, with and without a cluster secret,
// healthy and with a node that hangs now and then: no read returns a value
// an acknowledged write had replaced before the read began (see
// internal/history), and after the writes every node serves the latest.
func TestHistoryOverHTTP(t *testing.T) {
	type variant struct {
		name      string
		nodes     int
		multiplex bool
		secret    bool
		hang      bool
	}
	var vs []variant
	for _, mux := range []bool{false, true} {
		for _, secret := range []bool{false, true} {
			for _, hang := range []bool{false, true} {
				name := map[bool]string{false: "HTTP/1.1", true: "multiplexed"}[mux] +
					map[bool]string{false: ", unsigned writes", true: ", secret"}[secret] +
					map[bool]string{false: "", true: ", a node hangs now and then"}[hang]
				vs = append(vs, variant{name, 3, mux, secret, hang})
			}
		}
	}
	vs = append(vs, variant{"5 nodes, HTTP/1.1, secret", 5, false, true, false})
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = "k" + string(rune('a'+i))
	}
	for _, v := range vs {
		t.Run(v.name, func(t *testing.T) {
			if v.multiplex && v.hang && !*historyMuxHang {
				// nethttptest's faults close every node's Pool to end the
				// multiplexed connections, which no deployment does, and
				// what it finds is rare: it needs minutes of load
				// (-history.for). Run it with -history.muxhang.
				t.Skip("multiplexed with a hanging node: run with -history.muxhang")
			}
			seed := *historySeed
			if seed == 0 {
				seed = rand.Uint64()
			}
			t.Logf("seed %d (repeat with -history.seed=%d)", seed, seed)
			src := history.NewSource(keys)
			po := nethttp.PoolOptions{Multiplex: v.multiplex, UnsignedWrites: !v.secret}
			if v.secret {
				po.Cluster.Secret = []byte("history secret")
			}
			nodes := nethttptest.Start(t, v.nodes, &nethttptest.Options{
				Getter: func(int) getter.Getter { return getter.Func(src.Get) },
				// A write waits SlowAfter for a hung node: 300 ms, so that
				// a run with one makes more than a few writes.
				GroupOptions: cache.GroupOptions{NotFoundTTL: time.Minute, PeerPolicy: cache.PeerPolicy{SlowAfter: 300 * time.Millisecond}},
				PoolOptions:  po,
			})
			w := history.Workload{
				Nodes: len(nodes), Group: func(i int) *cache.Group { return nodes[i].Group },
				Source: src, Keys: keys, Writers: 3, Readers: 6, Duration: *historyFor, MaxOps: 1 << 20, Seed: seed,
			}
			if v.hang {
				w.Fault = func(ctx context.Context, rng *rand.Rand) {
					for ctx.Err() == nil {
						n := nodes[rng.IntN(len(nodes))]
						wait(ctx, time.Duration(100+rng.IntN(200))*time.Millisecond)
						n.SetFault(nethttptest.Fault{Hang: true})
						wait(ctx, time.Duration(200+rng.IntN(400))*time.Millisecond)
						n.SetFault(nethttptest.Fault{})
					}
				}
			}
			rep := history.Run(t.Context(), w)
			t.Log(rep)
			if rep.Reads < 200 || rep.Acked < 10 {
				t.Fatalf("%v: too little checked", rep)
			}
			if len(rep.Violations) > 0 {
				for i, n := range nodes {
					st := n.Group.Stats()
					t.Logf("node%d (%s): %d peer errors, %d fallbacks, %d next-peer, %d ejected loads, %d hedges (%d won), %d handoffs",
						i, n.Addr, st.PeerErrors, st.FallbackLoads, st.NextPeer, st.EjectedLoads, st.Hedges, st.HedgeWins, st.Handoffs)
				}
				for _, v := range rep.Violations[:min(5, len(rep.Violations))] {
					t.Logf("%q: owner %s, next node %v", v.Read.Key, nodes[0].Owner(v.Read.Key).Addr, nodes[v.Read.Node].Addr)
				}
				t.Fatalf("%v\n%s", rep, rep.Detail(10))
			}
		})
	}
}

// wait waits for d or until ctx ends.
func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
