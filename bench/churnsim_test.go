package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// The membership workload's cluster without its network and its clock: 5
// groups joined by picker.Peers and a transport that calls the owner's
// ServePeer in the same goroutine, fed the Gets of BenchmarkChurnFloor's
// sequence one at a time, each on a node drawn at random. What it
// measures depends only on the groups' memory (main, hot, their budget
// and policy), never on the machine's load: the same loads/dead-key as
// BenchmarkKillOwner (with a kill: the node's transport fails from the
// window on and no Get is sent to it), and per Get the hot-cache hits
// and the fetches from peers.

// simPeer is a peer reached by a direct call of its registry's ServePeer;
// down makes it fail as a crashed node's refused connection does. It
// carries Gets of one key only, as the workload needs.
type simPeer struct {
	c    *simCluster
	addr string
}

func (p simPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	n := p.c.nodes[p.addr]
	switch {
	case n.down:
		return errors.New("connection refused")
	case (req.Op != cache.OpGet && req.Op != cache.OpPeek) || len(req.Keys) != 1:
		return errors.ErrUnsupported
	}
	p.c.fetches++
	return n.reg.ServePeer(ctx, req, reply)
}

func (p simPeer) Addr() string { return p.addr }

type simNode struct {
	reg   *cache.Registry
	group *cache.Group
	peers *picker.Peers
	down  bool
}

type simCluster struct {
	nodes   map[string]*simNode
	addrs   []string
	loads   []int32
	fetches int
	budget  int64 // each node's
}

func newSimCluster(tb testing.TB, n int, budget int64, keys int) *simCluster {
	c := &simCluster{nodes: map[string]*simNode{}, loads: make([]int32, keys), budget: budget}
	for i := range n {
		c.addrs = append(c.addrs, fmt.Sprintf("node-%d", i))
	}
	quiet := slog.New(slog.DiscardHandler)
	for _, a := range c.addrs {
		p, err := picker.NewPeers(a, func(addr string) cache.Peer { return simPeer{c, addr} }, &picker.Options{Logger: quiet})
		if err != nil {
			tb.Fatal(err)
		}
		if err := p.Set(c.addrs...); err != nil {
			tb.Fatal(err)
		}
		reg := cache.NewRegistry()
		g, err := reg.NewGroup(mbGroup, budget, getter.Func(func(_ context.Context, key string) ([]byte, error) {
			var id int
			if _, err := fmt.Sscanf(key, "k%06d", &id); err != nil || id >= len(c.loads) {
				return nil, getter.ErrNotFound
			}
			c.loads[id]++
			return mbValueOf(key), nil
		}), &cache.GroupOptions{Peers: p, Logger: quiet, PeerPolicy: cache.PeerPolicy{NoHedge: true}})
		if err != nil {
			tb.Fatal(err)
		}
		c.nodes[a] = &simNode{reg: reg, group: g, peers: p}
	}
	return c
}

// simResult is what simRun measured in the window.
type simResult struct {
	perKey          float64 // loads per dead-owner (node-0) key asked
	otherPerKey     float64 // loads per key of the other nodes asked
	gets            int
	hotHits, fetch  float64 // per Get
	loadsPerGet     float64
	mainItems, hotN int64
	a0PerKey        float64 // as perKey, for that cluster
	a0BudgetPerGet  float64 // a0PerGet for a cluster that held as many keys as its live nodes' whole budgets
	a0PerGet        float64 // the loads per Get of a cluster that held the most popular keys its live nodes' main caches can hold, for ever
}

// simRun replays BenchmarkChurnFloor's sequence of the whole cluster
// (warm Gets, then window Gets, over the cluster's keys) through c,
// killing node-0 at the window if kill.
func simRun(tb testing.TB, c *simCluster, kill bool, warm, window int) simResult {
	r := rand.New(rand.NewPCG(1, 18))
	z := rand.NewZipf(r, 1.01, 1, uint64(len(c.loads)-1))
	pick := rand.New(rand.NewPCG(2, 18))
	ctx := context.Background()
	victim := c.nodes[c.addrs[0]]
	var before []int32
	var hot0, fetch0 int64
	asked := map[int]bool{}
	others := map[int]bool{}
	a0, a0dead, a0budget := 0, 0, 0
	var held, budgetHeld int
	var res simResult
	for i := range warm + window {
		if i == warm {
			before = append([]int32(nil), c.loads...)
			res.mainItems, res.hotN = victim.group.Stats().Main.Items, victim.group.Stats().Hot.Items
			for _, n := range c.nodes {
				hot0 += n.group.Stats().Hot.Hits
			}
			fetch0 = int64(c.fetches)
			victim.down = kill
			live := len(c.addrs)
			if kill {
				live--
			}
			held = live * int(res.mainItems)
			budgetHeld = live * int(c.budget/(7+mbValue))
		}
		id := int(z.Uint64())
		node := c.nodes[c.addrs[pick.IntN(len(c.addrs))]]
		for kill && node.down {
			node = c.nodes[c.addrs[pick.IntN(len(c.addrs))]]
		}
		if _, err := node.group.Get(ctx, mbKey(id)); err != nil {
			tb.Fatal(err)
		}
		if i >= warm {
			dead := victim.peers.Owner(mbKey(id)) == c.addrs[0]
			if id >= budgetHeld {
				a0budget++
			}
			if id >= held { // key number k is the k+1-th most popular
				a0++
				if dead {
					a0dead++
				}
			}
			if dead {
				asked[id] = true
			} else {
				others[id] = true
			}
		}
	}
	sum := 0
	for id := range asked {
		sum += int(c.loads[id] - before[id])
	}
	osum := 0
	for id := range others {
		osum += int(c.loads[id] - before[id])
	}
	res.otherPerKey = float64(osum) / float64(len(others))
	var hot, loads int64
	for _, n := range c.nodes {
		hot += n.group.Stats().Hot.Hits
	}
	for id := range c.loads {
		loads += int64(c.loads[id] - before[id])
	}
	res.perKey = float64(sum) / float64(len(asked))
	res.gets = window
	res.hotHits = float64(hot-hot0) / float64(window)
	res.fetch = float64(int64(c.fetches)-fetch0) / float64(window)
	res.loadsPerGet = float64(loads) / float64(window)
	res.a0PerGet = float64(a0) / float64(window)
	res.a0BudgetPerGet = float64(a0budget) / float64(window)
	res.a0PerKey = float64(a0dead) / float64(len(asked))
	return res
}

// BenchmarkChurnSim reports, for the control and the kill at 256 KiB:
// loads/dead-key, loads/get, hot-hits/get and fetches/get (peer requests
// per Get) in the window. Run with -benchtime=1x.
func BenchmarkChurnSim(b *testing.B) {
	for _, kill := range []bool{false, true} {
		name := "control"
		if kill {
			name = "kill"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				res := simRun(b, newSimCluster(b, floorNodes, mbSmall, mbKeys), kill, floorWarmGets, floorWindowGets)
				b.ReportMetric(res.perKey, "loads/dead-key")
				b.ReportMetric(res.loadsPerGet, "loads/get")
				b.ReportMetric(res.otherPerKey, "other-loads/key")
				b.ReportMetric(res.a0PerGet, "a0-loads/get")
				b.ReportMetric(res.a0BudgetPerGet, "a0-budget-loads/get")
				b.ReportMetric(res.a0PerKey, "a0-loads/dead-key")
				b.ReportMetric(res.hotHits, "hot-hits/get")
				b.ReportMetric(res.fetch, "fetches/get")
				b.ReportMetric(float64(res.mainItems), "main-entries")
				b.ReportMetric(float64(res.hotN), "hot-entries")
			}
		})
	}
}

// TestClusterMemoryNearA0 replays a fifth of BenchmarkChurnSim's cluster
// (a fifth of the keys, of each node's budget and of the Gets; a
// twentieth under the race detector) and checks
// the 5 nodes' source loads per Get against A0's on the same sequence
// with as many keys as the nodes' whole budgets hold (71 bytes a key): at
// most 1.2 times in steady state and 1.3 times after a kill (1.14 and 1.18
// measured). That is what a node's budget holds, its split between main
// and hot, and the policy's choices, together: a hot cache allowed half
// of main gives 1.33 and 1.38, a policy blind to uses 1.35 and 1.43.
func TestClusterMemoryNearA0(t *testing.T) {
	scale := 5
	if raceEnabled {
		scale = 20
	}
	for _, kill := range []bool{false, true} {
		res := simRun(t, newSimCluster(t, floorNodes, mbSmall/int64(scale), mbKeys/scale), kill, floorWarmGets/scale, floorWindowGets/scale)
		limit := 1.2
		if kill {
			limit = 1.3
		}
		t.Logf("kill %v: %.4f loads/get, A0 %.4f (x%.3f); hot hits/get %.3f, fetches/get %.3f", kill,
			res.loadsPerGet, res.a0BudgetPerGet, res.loadsPerGet/res.a0BudgetPerGet, res.hotHits, res.fetch)
		if res.loadsPerGet > limit*res.a0BudgetPerGet {
			t.Errorf("kill %v: %.4f loads per Get, more than %.2f x A0's %.4f", kill, res.loadsPerGet, limit, res.a0BudgetPerGet)
		}
	}
}
