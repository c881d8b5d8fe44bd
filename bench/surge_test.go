package bench

import (
	"slices"
	"testing"
	"time"
)

// The rolling restart of examples/kubernetes: a Deployment with maxSurge 1
// and maxUnavailable 0 starts the new pod (a new address) first, waits
// until it is ready, and only then terminates an old one, so that the
// cluster never has fewer nodes' memory than its size. See
// bench/README.md, "Membership changes".

// surgeReady waits until the offer that n's joining started is over:
// every other live node has offered n keys (Stats.Offered rose at each)
// and for 500 ms neither their offers nor n's takes (Stats.TakenOver)
// moved; at most limit. It returns how long it waited.
func (c *mbCluster) surgeReady(n *mbNode, others []*mbNode, limit time.Duration) time.Duration {
	start := time.Now()
	base := make([]int64, len(others))
	for i, o := range others {
		base[i] = o.group.Stats().Offered
	}
	var last int64 = -1
	stable := start
	for time.Since(start) < limit {
		time.Sleep(50 * time.Millisecond)
		all := true
		sum := n.group.Stats().TakenOver
		for i, o := range others {
			h := o.group.Stats().Offered
			all = all && h > base[i]
			sum += h
		}
		if sum != last {
			last, stable = sum, time.Now()
		}
		if all && time.Since(stable) >= 500*time.Millisecond {
			break
		}
	}
	return time.Since(start)
}

// rollingSurge replaces every node in turn as that Deployment does: a new
// node starts empty at a new address and is added to every ring and then,
// once ready (surgeReady), to the clients' view; then the old node leaves
// the clients' view and every ring, drains (Pool.Drain, its offer)
// and stops. With replace false it keeps the same schedule (the join's
// wait is cfg.settle) and changes nothing: the control. held is the keys
// the replaced nodes held in their main caches when their step began; the
// phases are join (the new node's start to its readiness), out (the old
// node's leaving to its stop) and back (the settle after).
func rollingSurge(tb testing.TB, cfg mbConfig, replace bool) (res mbResult, join mbPhase, ready time.Duration, diag surgeDiag, loads, gets int64) {
	c := newMBCluster(tb, cfg.nodes, cfg.keys, cfg.budget, cfg.drain)
	defer c.close()
	if cfg.budget >= mbWhole {
		c.prewarm(cfg.keys, cfg.clients)
	}
	cl := c.clients(cfg.clients, cfg.keys)
	time.Sleep(cfg.warm)
	s0 := c.waitSecond()
	time.Sleep(cfg.steady)
	s1 := c.waitSecond()
	res.steadyRate, _ = c.rate(s0, s1)
	c.mu.Lock()
	order := make([]*mbNode, 0, len(c.nodes))
	for _, n := range c.nodes {
		order = append(order, n)
	}
	c.mu.Unlock()
	g0 := cl.gets.Load()
	mark := func() (int64, int64) { return c.src.total(), cl.gets.Load() }
	var n *mbNode // the newest node
	for _, old := range order {
		res.held += int(old.group.Stats().Main.Items)
		side0 := surgeSideLoads(c, nil)
		l0, g0 := mark()
		if !replace {
			time.Sleep(cfg.settle)
		} else {
			c.mu.Lock()
			others := make([]*mbNode, 0, len(c.nodes))
			for _, o := range c.nodes {
				others = append(others, o)
			}
			c.mu.Unlock()
			n = c.start("")
			c.discover(nil)
			ready += c.surgeReady(n, others, cfg.drain)
			diag.joinTaken += n.group.Stats().TakenOver
			c.publish()
		}
		l1, g1 := mark()
		c.mu.Lock()
		stay := make([]*mbNode, 0, len(c.nodes))
		for _, o := range c.nodes {
			if o != old {
				stay = append(stay, o)
			}
		}
		c.mu.Unlock()
		t0, e0 := surgeCounts(stay)
		h0 := old.group.Stats().Offered
		class := surgeClasses(tb, c, old, n, replace, stay[0], cfg.keys)
		before := c.src.loads()
		if !replace {
			time.Sleep(cfg.drain)
		} else {
			c.publish(old)
			c.discover(old)
			c.stop(old, false)
		}
		t1, e1 := surgeCounts(stay)
		after := c.src.loads()
		for id, cl := range class {
			diag.out[cl].loads += int64(after[id] - before[id])
		}
		diag.outOffered += old.group.Stats().Offered - h0
		diag.outTaken += t1 - t0
		diag.outEvicted += e1 - e0
		l2, g2 := mark()
		for i := range diag.out {
			diag.out[i].gets += g2 - g1
		}
		time.Sleep(cfg.settle)
		l3, g3 := mark()
		diag.side += surgeSideLoads(c, old) - side0
		join.loads += l1 - l0
		join.gets += g1 - g0
		res.out.loads += l2 - l1
		res.out.gets += g2 - g1
		res.back.loads += l3 - l2
		res.back.gets += g3 - g2
	}
	time.Sleep(cfg.settle)
	s2 := c.waitSecond()
	gets = cl.gets.Load() - g0
	cl.end()
	var mean float64
	mean, res.peak = c.rate(s1, s2)
	loads = int64(mean * float64(s2-s1))
	res.gets, res.errs, res.wrong = cl.gets.Load(), cl.errs.Load(), cl.wrong.Load()
	return res, join, ready / time.Duration(max(len(order), 1)), diag, loads, gets
}

// surgeDiag counts what the offers of a surge roll moved: the keys the
// new nodes took while joining, and while the old nodes left, the keys
// they offered, the keys the staying nodes took and the entries those
// evicted from their main caches (in the control: the same counts over
// the same schedule).
type surgeDiag struct {
	joinTaken, outOffered, outTaken, outEvicted int64
	side                                        int64 // hedges and fallback loads in the steps (surgeSideLoads)
	// The out phases' loads, with their Gets, of the keys of each class
	// (surgeOwn, surgeMoved, surgeRest; see surgeClasses).
	out [3]mbPhase
}

// The classes of keys in a surge's out phase.
const (
	surgeOwn   = iota // the leaving node's, in the ring with the new node
	surgeMoved        // the new node's since its join
	surgeRest         // the others'
)

// surgeAddr stands for the new node of a step in the control's rings: the
// control starts none, and the split by key must use rings of the same
// shape in both runs (the roll's leaving node owns a sixth of the keys
// once the new node has joined, the control's a fifth without it).
const surgeAddr = "http://surge.invalid:1"

// surgeClasses says, for each key, which class of the out phase in which
// old leaves it is in: from the rings of the nodes running, with the new
// node n (the roll) or surgeAddr in its place (the control), before and
// after old leaves. The roll's rings are checked against ref's own.
func surgeClasses(tb testing.TB, c *mbCluster, old, n *mbNode, roll bool, ref *mbNode, keys int) []int8 {
	c.mu.Lock()
	var addrs []string
	for a := range c.nodes {
		addrs = append(addrs, a)
	}
	c.mu.Unlock()
	newAddr := surgeAddr
	if roll {
		newAddr = n.addr
	} else {
		addrs = append(addrs, surgeAddr)
	}
	slices.Sort(addrs)
	before := ssClassRing(tb, addrs)
	after := ssClassRing(tb, slices.DeleteFunc(slices.Clone(addrs), func(a string) bool { return a == old.addr }))
	class := make([]int8, keys)
	for id := range class {
		k := mbKey(id)
		if roll && id < 256 && before.Owner(k) != ref.pool.Owner(k) {
			tb.Fatalf("key %s: the split's ring names %s, the cluster's %s", k, before.Owner(k), ref.pool.Owner(k))
		}
		switch {
		case before.Owner(k) == old.addr:
			class[id] = surgeOwn
		case after.Owner(k) == newAddr:
			class[id] = surgeMoved
		default:
			class[id] = surgeRest
		}
	}
	return class
}

// surgeSideLoads sums the loads the running nodes (and stopped, a node
// that stopped since) made beside their owners' answers: hedges beside a
// slow fetch, and local loads for a failed or ejected owner.
func surgeSideLoads(c *mbCluster, stopped *mbNode) (n int64) {
	c.mu.Lock()
	ns := make([]*mbNode, 0, len(c.nodes)+1)
	for _, o := range c.nodes {
		ns = append(ns, o)
	}
	c.mu.Unlock()
	if stopped != nil && !slices.Contains(ns, stopped) {
		ns = append(ns, stopped)
	}
	for _, o := range ns {
		st := o.group.Stats()
		n += st.Hedges + st.FallbackLoads + st.EjectedLoads
	}
	return n
}

// surgeCounts sums the nodes' TakenOver and main-cache evictions.
func surgeCounts(ns []*mbNode) (taken, evicted int64) {
	for _, n := range ns {
		st := n.group.Stats()
		taken += st.TakenOver
		evicted += st.Main.Evictions
	}
	return taken, evicted
}

// benchSurge is BenchmarkRollingRestart's surge variant at budget: the
// control, then the roll, with the same metrics and join-extra/key (the
// join phase's share) and ready-s (the mean wait for readiness).
func benchSurge(b *testing.B, budget int64) {
	for range b.N {
		cfg := mbConfigFor(testing.Short(), budget)
		ctl, cJoin, _, cd, cLoads, cGets := rollingSurge(b, cfg, false)
		res, join, ready, d, loads, gets := rollingSurge(b, cfg, true)
		if h := float64(max(res.held, 1)); res.held > 0 {
			b.ReportMetric(float64(d.joinTaken)/h, "join-taken/key")
			b.ReportMetric(float64(d.outOffered)/h, "out-offered/key")
			b.ReportMetric(float64(d.outTaken)/h, "out-taken/key")
			b.ReportMetric(float64(d.outEvicted)/h, "out-evicted/key")
			b.ReportMetric(float64(cd.outEvicted)/h, "control-out-evicted/key")
			b.ReportMetric(d.out[surgeOwn].extra(cd.out[surgeOwn], res.held), "out-own-extra/key")
			b.ReportMetric(d.out[surgeMoved].extra(cd.out[surgeMoved], res.held), "out-moved-extra/key")
			b.ReportMetric(d.out[surgeRest].extra(cd.out[surgeRest], res.held), "out-rest-extra/key")
		}
		b.ReportMetric(float64(d.side-cd.side)/float64(max(res.held, 1)), "side-loads-extra/key")
		b.ReportMetric(join.extra(cJoin, res.held), "join-extra/key")
		b.ReportMetric(res.out.extra(ctl.out, res.held), "out-extra/key")
		b.ReportMetric(res.back.extra(ctl.back, res.held), "back-extra/key")
		b.ReportMetric(ready.Seconds(), "ready-s")
		res.extra = (float64(loads)/float64(gets) - float64(cLoads)/float64(cGets)) * float64(gets)
		b.ReportMetric(float64(cLoads)/float64(cGets), "control-loads/get")
		b.ReportMetric(float64(loads)/float64(gets), "roll-loads/get")
		res.report(b)
	}
}

// TestSurgeHarness runs a small surge roll: every Get answers the key's
// value through every join and leave.
func TestSurgeHarness(t *testing.T) {
	cfg := mbConfig{nodes: 3, keys: 2_000, clients: 4, budget: mbSmall,
		warm: time.Second, steady: time.Second, settle: 300 * time.Millisecond, drain: 200 * time.Millisecond}
	res, _, _, _, _, _ := rollingSurge(t, cfg, true)
	if res.errs+res.wrong > 0 || res.gets == 0 {
		t.Errorf("surge roll: %d Gets, %d errors, %d wrong values", res.gets, res.errs, res.wrong)
	}
}
