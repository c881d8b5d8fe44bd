package cache_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/history"
	"github.com/geecache/geecache/picker"
)

// The history checks: concurrent reads and writes on an in-process
// cluster, each read checked against the acknowledged writes
// (internal/history). -history.for runs each longer; -history.seed
// repeats a run.
var (
	historyFor       = flag.Duration("history.for", 1500*time.Millisecond, "how long each history check runs")
	historySeed      = flag.Uint64("history.seed", 0, "random seed of the history checks (0: a new one each run)")
	historyCacheOnly = flag.Bool("history.cacheonly", false, "also run the histories whose Sets write the cache only")
	historyRounds    = flag.Int("history.rounds", 300, "rounds of TestSetRacingGetsLeavesNoStaleCopy")
)

func historySeedFor(t *testing.T) uint64 {
	seed := *historySeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (repeat with -history.seed=%d)", seed, seed)
	return seed
}

// An hNode is a node of the in-process cluster: its group (a restart makes
// a new one, with empty memory), its ring, and whether it hangs.
type hNode struct {
	addr  string
	group atomic.Pointer[cache.Group]
	reg   atomic.Pointer[cache.Registry] // group's
	peers *picker.Peers

	mu   sync.Mutex
	hung chan struct{} // not nil while the node hangs
}

func (n *hNode) wait(ctx context.Context) error {
	n.mu.Lock()
	c := n.hung
	n.mu.Unlock()
	if c != nil {
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (n *hNode) hang() {
	n.mu.Lock()
	if n.hung == nil {
		n.hung = make(chan struct{})
	}
	n.mu.Unlock()
}

func (n *hNode) resume() {
	n.mu.Lock()
	if n.hung != nil {
		close(n.hung)
		n.hung = nil
	}
	n.mu.Unlock()
}

// hPeer is the in-process transport: each request calls the other node's
// group as a transport's server does.
type hPeer struct{ to *hNode }

func (p hPeer) Addr() string { return p.to.addr }

// Do waits while the node hangs, then serves req at the node's group
// alone (Registry.ServePeer); it does not carry an offer. A node that hangs
// while it serves req stops too, as a stopped process would: its answers
// and its signs that it is loading wait for the resume.
func (p hPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if err := p.to.wait(ctx); err != nil {
		return err
	}
	if req.Op == cache.OpOffer {
		return errors.ErrUnsupported
	}
	return serve(ctx, p.to.reg.Load(), req, hReply{ctx: ctx, to: p.to, reply: reply})
}

// hReply passes a node's answers on, each once the node does not hang;
// those the asking node no longer waits for are dropped.
type hReply struct {
	ctx   context.Context
	to    *hNode
	reply cache.PeerReply
}

func (r hReply) Answer(i int, v cache.ByteView, ttl time.Duration, err error) {
	if r.to.wait(r.ctx) == nil {
		r.reply.Answer(i, v, ttl, err)
	}
}

func (r hReply) Loading() {
	if r.to.wait(r.ctx) == nil {
		r.reply.Loading()
	}
}

type hCluster struct {
	nodes []*hNode
	src   *history.Source
	opts  cache.GroupOptions
}

func newHCluster(t *testing.T, n int, keys []string, opts cache.GroupOptions) *hCluster {
	c := &hCluster{src: history.NewSource(keys), opts: opts}
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("node%d", i)
		c.nodes = append(c.nodes, &hNode{addr: addrs[i]})
	}
	byAddr := map[string]*hNode{}
	for _, nd := range c.nodes {
		byAddr[nd.addr] = nd
	}
	for _, nd := range c.nodes {
		p, err := picker.NewPeers(nd.addr, func(a string) cache.Peer { return hPeer{byAddr[a]} },
			&picker.Options{Handoff: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Set(addrs...); err != nil {
			t.Fatal(err)
		}
		nd.peers = p
		c.restart(t, nd)
	}
	return c
}

// restart gives nd a new group: a node that restarted, with empty memory.
func (c *hCluster) restart(t *testing.T, nd *hNode) {
	o := c.opts
	o.Peers, o.Logger = nd.peers, quiet
	reg := cache.NewRegistry()
	g, err := reg.NewGroup("g", 1<<20, getter.Func(c.src.Get), &o)
	if err != nil {
		t.Fatal(err)
	}
	nd.reg.Store(reg)
	nd.group.Store(g)
}

func (c *hCluster) workload(seed uint64, keys []string) history.Workload {
	return history.Workload{
		Nodes: len(c.nodes), Group: func(i int) *cache.Group { return c.nodes[i].group.Load() },
		Source: c.src, Keys: keys, Writers: 3, Readers: 6, Duration: *historyFor, MaxOps: 1 << 20, Seed: seed,
	}
}

func historyKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	return keys
}

// Concurrent Gets, GetManys, Sets, Removes, RemoveManys and Purges on
// three and five in-process nodes, healthy and with faults: no read
// returns a value that an acknowledged write had replaced before the read
// began, and after the writes end every node serves the latest value.
func TestHistoryInProcess(t *testing.T) {
	keys := historyKeys(12)
	opts := cache.GroupOptions{NotFoundTTL: time.Minute}
	for _, c := range []struct {
		name      string
		nodes     int
		cacheOnly bool
		fault     func(t *testing.T, c *hCluster) func(ctx context.Context, rng *rand.Rand)
	}{
		{"3 nodes", 3, false, nil},
		{"5 nodes", 5, false, nil},
		{"3 nodes, values set in the cache only", 3, true, nil},
		{"5 nodes, values set in the cache only", 5, true, nil},
		{"3 nodes, one hangs now and then", 3, false, func(t *testing.T, c *hCluster) func(context.Context, *rand.Rand) {
			return func(ctx context.Context, rng *rand.Rand) {
				for ctx.Err() == nil {
					n := c.nodes[rng.IntN(len(c.nodes))]
					sleep(ctx, time.Duration(100+rng.IntN(200))*time.Millisecond)
					n.hang()
					sleep(ctx, time.Duration(200+rng.IntN(600))*time.Millisecond)
					n.resume()
				}
			}
		}},
		{"3 nodes, one restarts now and then", 3, false, func(t *testing.T, c *hCluster) func(context.Context, *rand.Rand) {
			return func(ctx context.Context, rng *rand.Rand) {
				for ctx.Err() == nil {
					sleep(ctx, time.Duration(100+rng.IntN(300))*time.Millisecond)
					c.restart(t, c.nodes[rng.IntN(len(c.nodes))])
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.cacheOnly && !*historyCacheOnly {
				t.Skip("values set in the cache only: run with -history.cacheonly")
			}
			o := opts
			if c.cacheOnly {
				// A hedge loads the source beside an owner that is slow to
				// answer; with values set in the cache only, the source's
				// value is older than a Set's (see Group.Set).
				o.PeerPolicy.NoHedge = true
			}
			cl := newHCluster(t, c.nodes, keys, o)
			w := cl.workload(historySeedFor(t), keys)
			w.CacheOnly = c.cacheOnly
			if c.fault != nil {
				w.Fault = c.fault(t, cl)
			}
			rep := history.Run(t.Context(), w)
			t.Log(rep)
			if rep.Reads < 1000 || rep.Acked < 50 {
				t.Fatalf("%v: too little checked", rep)
			}
			if len(rep.Violations) > 0 {
				for i, n := range cl.nodes {
					s := n.group.Load().Stats()
					t.Logf("node%d: %d peer errors, %d fallbacks, %d next-peer, %d ejected loads, %d busy, %d hedges, %d handoffs, evictions %d/%d",
						i, s.PeerErrors, s.FallbackLoads, s.NextPeer, s.EjectedLoads, s.PeerBusy, s.Hedges, s.Handoffs, s.Main.Evictions, s.Hot.Evictions)
				}
				t.Fatalf("%v\n%s", rep, rep.Detail(10))
			}
		})
	}
}

// sleep sleeps for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// One Set of a fresh key races with Gets of it on every node, then
// everything stops: every node serves the Set's value afterwards, the
// owner's and every copy. Rounds of it, each with fresh keys.
func TestSetRacingGetsLeavesNoStaleCopy(t *testing.T) {
	rounds := *historyRounds
	seed := historySeedFor(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	keys := historyKeys(rounds)
	cl := newHCluster(t, 3, keys, cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}})
	ctx := t.Context()
	stale := 0
	for r, key := range keys {
		val := fmt.Sprintf("set:%d", r)
		var wg sync.WaitGroup
		for i := range 6 {
			g := cl.nodes[i%3].group.Load()
			d := time.Duration(rng.IntN(300)) * time.Microsecond
			wg.Go(func() {
				time.Sleep(d) // spreads the Gets around the Set
				_, _ = g.Get(ctx, key)
			})
		}
		setter := cl.nodes[rng.IntN(3)].group.Load()
		if err := setter.Set(ctx, key, []byte(val), 0); err != nil {
			t.Fatalf("round %d: Set: %v", r, err)
		}
		wg.Wait()
		for i, n := range cl.nodes {
			if v, err := n.group.Load().Get(ctx, key); err != nil || v.String() != val {
				stale++
				t.Errorf("round %d: node%d serves %q, %v after the Set of %q and the Gets ended", r, i, v, err, val)
			}
		}
	}
	t.Logf("%d rounds, %d stale node-keys", rounds, stale)
}
