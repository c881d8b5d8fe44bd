package bench

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
)

// The membership scenarios on the workload of member_test.go:
// a rolling restart of 5 nodes, a scale-out 5 -> 6 and a kill of one owner.
// Each is one run (-benchtime=1x) and reports its figures as metrics; see
// bench/README.md, "Membership changes".

// setDrain sets PoolOptions.DrainFor where the Pool has one (this file
// also builds against a tree without it, for the baseline).
func setDrain(o *nethttp.PoolOptions, d time.Duration) {
	if f := reflect.ValueOf(o).Elem().FieldByName("DrainFor"); f.IsValid() {
		f.SetInt(int64(d))
	}
}

// drainPool runs the Pool's drain where it has one (Drain; Shutdown in
// trees from before the rename, so that a baseline of that age still
// drains), else waits as long while the node still serves.
func drainPool(ctx context.Context, p *nethttp.Pool, d time.Duration) {
	switch s := any(p).(type) {
	case interface{ Drain(context.Context) error }:
		_ = s.Drain(ctx)
	case interface{ Shutdown(context.Context) error }:
		_ = s.Shutdown(ctx)
	default:
		time.Sleep(d)
	}
}

// mbConfig is one scenario's size.
type mbConfig struct {
	nodes, keys, clients int
	budget               int64
	warm, steady, settle time.Duration
	drain                time.Duration
}

func mbConfigFor(short bool, budget int64) mbConfig {
	c := mbConfig{nodes: 5, keys: 100_000, clients: 32, budget: budget,
		warm: 15 * time.Second, steady: 5 * time.Second, settle: 3 * time.Second, drain: 5 * time.Second}
	if short {
		c.keys, c.clients, c.warm, c.steady, c.settle, c.drain = 5_000, 8, 2*time.Second, 2*time.Second, time.Second, 500*time.Millisecond
	}
	return c
}

// mbResult is what a scenario measured.
type mbResult struct {
	steadyRate        float64 // loads per second before the change
	peak              int64   // the largest 1 s bucket during the change
	extra             float64 // loads during the change minus the steady rate times its length
	held              int     // the denominator of extra (what each scenario says)
	gets, errs, wrong int64
	perKeyMean        float64 // kill: loads per key of the dead owner asked
	perKeyMax         int32
	reloaded          int           // kill: keys of the dead owner loaded more than once
	readmit           time.Duration // kill: from the node's restart to its readmission by every survivor
	evictions         int64         // kill: the survivors' main-cache evictions in the window
	out, back         mbPhase       // roll: the loads and Gets while each node was out, and in the settle after
	split             *killSplit    // kill: the dead owner's keys by what it held (kill_test.go)
	steadyHedges      float64       // roll: the hedges (Stats.Hedges, each a load) per second of the steady window
}

// mbPhase counts the loads and Gets of one kind of phase of a roll.
type mbPhase struct{ loads, gets int64 }

// extra is the loads of p beyond the control's rate per Get, per key held.
func (p mbPhase) extra(control mbPhase, held int) float64 {
	if p.gets == 0 || control.gets == 0 || held == 0 {
		return 0
	}
	return (float64(p.loads)/float64(p.gets) - float64(control.loads)/float64(control.gets)) * float64(p.gets) / float64(held)
}

func (r mbResult) report(b *testing.B) {
	b.ReportMetric(r.steadyRate, "steady-loads/s")
	if r.steadyHedges > 0 {
		// The share of the steady loads that are hedges: a whole budget's
		// steady loads are all hedges (steady_test.go).
		b.ReportMetric(r.steadyHedges, "steady-hedges/s")
	}
	if r.steadyRate > 0 {
		b.ReportMetric(float64(r.peak)/r.steadyRate, "peak/steady")
	}
	if r.held > 0 {
		b.ReportMetric(r.extra/float64(r.held), "extra-loads/key")
		b.ReportMetric(float64(r.held), "keys")
	}
	if r.perKeyMean > 0 {
		b.ReportMetric(r.perKeyMean, "loads/dead-key")
		b.ReportMetric(float64(r.perKeyMax), "max-loads/dead-key")
		b.ReportMetric(float64(r.reloaded), "dead-keys-reloaded")
		b.ReportMetric(float64(r.evictions), "survivor-evictions")
		if r.readmit > 0 {
			b.ReportMetric(r.readmit.Seconds(), "readmit-s")
		}
	}
	if r.split != nil {
		r.split.report(b)
	}
	b.ReportMetric(float64(r.gets), "gets")
	b.ReportMetric(float64(r.errs), "errors")
	b.ReportMetric(float64(r.wrong), "wrong")
	if r.errs+r.wrong > 0 {
		b.Errorf("%d errors, %d wrong values", r.errs, r.wrong)
	}
}

// A roll is what a rolling restart does to each node in turn.
type roll struct {
	kept bool                          // the nodes' listening sockets outlive them (inplace_test.go)
	step func(c *mbCluster, n *mbNode) // nil: nothing
}

// The roll of nodes restarted at the same address: the discovery drops
// the node, it drains, stops, starts empty at the same address and is
// added back; and its control, which keeps the schedule (the drain's
// length) and restarts nothing.
var (
	rollSameAddress = roll{step: func(c *mbCluster, n *mbNode) {
		c.publish(n)
		c.discover(n)
		c.stop(n, false)
		c.start(n.addr[len("http://"):])
		c.discover(nil)
		c.publish()
	}}
	rollControl = roll{step: func(c *mbCluster, _ *mbNode) { time.Sleep(c.drain) }}
)

// rollingRestart runs r: a step for every node in turn, each followed by
// cfg.settle. held is the keys the nodes held in their main caches when
// their step began; the window is the roll and a settle after it, and
// loads and gets are counted in it.
func rollingRestart(tb testing.TB, cfg mbConfig, r roll) (res mbResult, loads, gets int64) {
	c := newMBClusterKept(tb, cfg.nodes, cfg.keys, cfg.budget, cfg.drain, r.kept)
	defer c.close()
	if cfg.budget >= mbWhole {
		c.prewarm(cfg.keys, cfg.clients)
	}
	cl := c.clients(cfg.clients, cfg.keys)
	time.Sleep(cfg.warm)
	s0 := c.waitSecond()
	h0 := c.hedges()
	time.Sleep(cfg.steady)
	s1 := c.waitSecond()
	res.steadyRate, _ = c.rate(s0, s1)
	res.steadyHedges = float64(c.hedges()-h0) / float64(max(s1-s0, 1))
	c.mu.Lock()
	order := make([]*mbNode, 0, len(c.nodes))
	for _, n := range c.nodes {
		order = append(order, n)
	}
	c.mu.Unlock()
	g0 := cl.gets.Load()
	// The phases of each step: "out" the step itself (from the node's
	// leaving to its return), "back" the settle after.
	mark := func() (int64, int64) { return c.src.total(), cl.gets.Load() }
	for _, n := range order {
		res.held += int(n.group.Stats().Main.Items)
		l0, g0 := mark()
		if r.step != nil {
			r.step(c, n)
		}
		l1, g1 := mark()
		time.Sleep(cfg.settle)
		l2, g2 := mark()
		res.out.loads += l1 - l0
		res.out.gets += g1 - g0
		res.back.loads += l2 - l1
		res.back.gets += g2 - g1
	}
	time.Sleep(cfg.settle)
	s2 := c.waitSecond()
	gets = cl.gets.Load() - g0
	cl.end()
	var mean float64
	mean, res.peak = c.rate(s1, s2)
	loads = int64(mean * float64(s2-s1))
	res.gets, res.errs, res.wrong = cl.gets.Load(), cl.errs.Load(), cl.wrong.Load()
	return res, loads, gets
}

// scaleOut adds a sixth node. held is the keys that moved to it that
// their old owner held (loaded before) and that were asked after the
// change; extra is their loads after it.
func scaleOut(tb testing.TB, cfg mbConfig) mbResult {
	c := newMBCluster(tb, cfg.nodes, cfg.keys, cfg.budget, cfg.drain)
	defer c.close()
	cl := c.clients(cfg.clients, cfg.keys)
	time.Sleep(cfg.warm)
	s0 := c.waitSecond()
	time.Sleep(cfg.steady)
	s1 := c.waitSecond()
	var res mbResult
	res.steadyRate, _ = c.rate(s0, s1)
	var old *mbNode
	for _, n := range *c.lb.Load() {
		old = n
	}
	before := c.src.loads()
	change := time.Now().UnixNano()
	n6 := c.start("")
	c.discover(nil)
	c.publish()
	time.Sleep(2 * cfg.settle)
	s2 := c.waitSecond()
	cl.end()
	_, res.peak = c.rate(s1, s2)
	after := c.src.loads()
	for id := range before {
		k := mbKey(id)
		if n6.pool.Owner(k) != n6.addr || before[id] == 0 || cl.asked[id].Load() < change {
			continue
		}
		_ = old
		res.held++
		res.extra += float64(after[id] - before[id])
	}
	res.gets, res.errs, res.wrong = cl.gets.Load(), cl.errs.Load(), cl.wrong.Load()
	return res
}

// The budgets: 256 KiB per node (about a fifth of the Gets miss), and one
// that holds the whole key set.
const (
	mbSmall = 256 << 10
	mbWhole = 16 << 20
)

// BenchmarkRollingRestart runs the control (the same schedule, nothing
// restarted) and then the roll; extra-loads/key is the roll's loads per Get
// over the control's, times the roll's Gets, per key the restarted nodes
// held, and peak/steady the roll's largest second over the steady rate
// before it.
func BenchmarkRollingRestart(b *testing.B) {
	for _, bud := range []struct {
		name   string
		budget int64
	}{{"256KiB", mbSmall}, {"whole", mbWhole}} {
		b.Run(bud.name, func(b *testing.B) {
			for range b.N {
				cfg := mbConfigFor(testing.Short(), bud.budget)
				ctl, cLoads, cGets := rollingRestart(b, cfg, rollControl)
				res, loads, gets := rollingRestart(b, cfg, rollSameAddress)
				// Where the extra loads fall: while a node is out (the
				// cluster has a fifth less memory, and its keys move), or
				// after it is back (its keys move back).
				b.ReportMetric(res.out.extra(ctl.out, res.held), "out-extra/key")
				b.ReportMetric(res.back.extra(ctl.back, res.held), "back-extra/key")
				b.ReportMetric(float64(ctl.out.loads)/float64(max(ctl.out.gets, 1)), "control-out-loads/get")
				b.ReportMetric(float64(res.out.loads)/float64(max(res.out.gets, 1)), "roll-out-loads/get")
				res.extra = (float64(loads)/float64(gets) - float64(cLoads)/float64(cGets)) * float64(gets)
				b.ReportMetric(float64(cLoads)/float64(cGets), "control-loads/get")
				// The largest second of each run over the same schedule: at
				// the whole budget the steady rate before the roll is hedges
				// of a hot cache still filling (steady_test.go), which the
				// control has as much of.
				b.ReportMetric(float64(res.peak), "peak-loads")
				b.ReportMetric(float64(ctl.peak), "control-peak-loads")
				b.ReportMetric(ctl.steadyRate, "control-steady-loads/s")
				b.ReportMetric(float64(loads)/float64(gets), "roll-loads/get")
				res.report(b)
			}
		})
		// The same budget rolled as examples/kubernetes does (surge_test.go).
		b.Run(bud.name+"-surge", func(b *testing.B) { benchSurge(b, bud.budget) })
		// Restarted in place, from a snapshot and without one, and with
		// its port closed meanwhile (inplace_test.go).
		b.Run(bud.name+"-inplace", func(b *testing.B) { benchInPlace(b, bud.budget, false, false) })
		b.Run(bud.name+"-inplace-cold", func(b *testing.B) { benchInPlace(b, bud.budget, true, false) })
		b.Run(bud.name+"-inplace-refused", func(b *testing.B) { benchInPlace(b, bud.budget, false, true) })
	}
}

func BenchmarkScaleOut(b *testing.B) {
	for range b.N {
		scaleOut(b, mbConfigFor(testing.Short(), mbWhole)).report(b)
	}
}

// hedges returns the live nodes' Stats.Hedges, summed.
func (c *mbCluster) hedges() (n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, nd := range c.nodes {
		n += nd.group.Stats().Hedges
	}
	return n
}

// prewarm gets every key once, through the nodes in turn, so that a
// budget that holds the whole key set holds it before the clients start
// (its steady state: no loads but for a change).
func (c *mbCluster) prewarm(keys, workers int) {
	ns := *c.lb.Load()
	forEach(keys, workers, func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = ns[i%len(ns)].group.Get(ctx, mbKey(i))
		cancel()
	})
}

// forEach calls fn(i) for each i in [0, n) on workers goroutines, each
// taking the next i, and returns when every call has returned.
func forEach(n, workers int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// TestMembershipHarness runs a small rolling restart, a kill and its
// control (a few seconds each): every Get answers the key's value, through every change.
func TestMembershipHarness(t *testing.T) {
	cfg := mbConfig{nodes: 3, keys: 2_000, clients: 4, budget: mbSmall,
		warm: time.Second, steady: time.Second, settle: 300 * time.Millisecond, drain: 200 * time.Millisecond}
	res, _, _ := rollingRestart(t, cfg, rollSameAddress)
	if res.errs+res.wrong > 0 || res.gets == 0 {
		t.Errorf("rolling restart: %d Gets, %d errors, %d wrong values", res.gets, res.errs, res.wrong)
	}
	for _, kill := range []bool{true, false} {
		res = killOwner(t, cfg, time.Second, kill)
		if res.errs+res.wrong > 0 || res.gets == 0 {
			t.Errorf("kill %v: %d Gets, %d errors, %d wrong values", kill, res.gets, res.errs, res.wrong)
		}
		// Every dead-owner key asked is in one group of the split, and
		// the owner held some (its hottest, at least).
		s := res.split
		if s == nil || s.held.keys+s.unheld.keys != res.held || s.held.keys == 0 || s.hot.keys == 0 ||
			s.held.loads+s.unheld.loads != int(res.extra) {
			t.Errorf("kill %v: split %+v of %d keys, %v loads", kill, s, res.held, res.extra)
		}
	}
}

// BenchmarkRollCapacity measures what a node out of a 256 KiB cluster
// costs by itself: the steady loads per Get of 4 nodes against 5 (the
// control of BenchmarkRollingRestart, nothing restarted), so that the
// roll's out-of-phase loads can be set against the memory the cluster
// lacks while a node is out. See bench/README.md, "Membership changes".
func BenchmarkRollCapacity(b *testing.B) {
	for range b.N {
		for _, n := range []int{5, 4} {
			cfg := mbConfigFor(testing.Short(), mbSmall)
			cfg.nodes = n
			_, loads, gets := rollingRestart(b, cfg, rollControl)
			b.ReportMetric(float64(loads)/float64(max(gets, 1)), fmt.Sprintf("loads/get-%dnodes", n))
		}
	}
}

// forEach calls fn once for each index, whatever the number of workers.
func TestForEachCallsEachIndexOnce(t *testing.T) {
	for _, workers := range []int{1, 3, 64} {
		calls := make([]atomic.Int32, 1000)
		forEach(len(calls), workers, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if n := calls[i].Load(); n != 1 {
				t.Fatalf("%d workers: index %d called %d times, want 1", workers, i, n)
			}
		}
	}
}
