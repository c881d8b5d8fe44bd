package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The kill of one owner, against the target "each of its keys asked in
// the next 10 s loads from the source at most 1.05 times on average
// cluster-wide, never more than 2; its hottest keys still take no load". See
// bench/README.md, "Membership changes".

// mbHotKeys is how many of the most popular keys (ranks 0 to 99: zipf
// gives key id i rank i) count as the hottest.
const mbHotKeys = 100

// Why a dead-owner key loaded: the classes of its loads in the window,
// by node and step. "home" is the node that should load it: in the kill
// the next node on the ring after the dead owner, in the control the owner.
const (
	clVictim   = iota // the dead owner, in flight at the kill
	clFallback        // a "fallback" step: a hedge beside a slow fetch, or a local load for a busy or failed peer
	clOther           // a "load" step at a node other than home: two nodes loading one key
	clFirst           // home's first load of the key in the window
	clOverlap         // home again, within mbLatency of its last load (one flight should have shared them)
	clAfterUse        // home again, after it had served the key from memory since its last load: evicted
	clNoUse           // home again, never served from memory since its last load: not admitted, or evicted before asked
	nClasses
)

var classNames = [nClasses]string{"victim", "fallback", "other-node", "home-first", "home-overlap", "home-evicted-after-use", "home-not-kept"}

// killGroup is the loads of one group of keys: how many, their mean and max.
type killGroup struct {
	keys, loads, max, over1, over2, zero int
	class, class2                        [nClasses]int // of every load of the group, and of the keys with more than 2
}

func (g *killGroup) add(d int, cls [nClasses]int) {
	g.keys++
	g.loads += d
	g.max = max(g.max, d)
	switch {
	case d == 0:
		g.zero++
	case d > 2:
		g.over2++
		for i, n := range cls {
			g.class2[i] += n
		}
	}
	if d > 1 {
		g.over1++
	}
	for i, n := range cls {
		g.class[i] += n
	}
}

func (g *killGroup) mean() float64 { return float64(g.loads) / float64(max(g.keys, 1)) }

func (g *killGroup) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d keys, %.3f loads/key (max %d; %d with 0, %d with >1, %d with >2); loads by class:", g.keys, g.mean(), g.max, g.zero, g.over1, g.over2)
	for i, n := range g.class {
		fmt.Fprintf(&b, " %s %d", classNames[i], n)
	}
	b.WriteString("; of the keys with >2:")
	for i, n := range g.class2 {
		fmt.Fprintf(&b, " %s %d", classNames[i], n)
	}
	return b.String()
}

// killSplit is the dead owner's keys asked in the window split by whether
// it held them in memory at the kill (the kill loses those: ideally one
// load each, by the next node, or none where a survivor holds a copy) or
// not (they would load anyway: the budget's churn), and its hottest keys.
type killSplit struct {
	held, unheld, hot killGroup
	// The hottest keys' Gets in the window: answered from the asking
	// node's memory, or fetched from home, which answered from memory or
	// loaded.
	hotGets, hotHits, hotHomeHits, hotHomeMisses int
	stats                                        survivorStats
	keys                                         []string // the first keys with more than 2 loads, described
	noUseGaps                                    []int64  // ns from home's load to its clNoUse reload
}

// mbLogKeys is how many keys with more than 2 loads a run describes: a
// benchmark's log keeps its first 10 lines.
const mbLogKeys = 5

func (s *killSplit) report(b *testing.B) {
	b.ReportMetric(float64(s.held.keys), "held-keys")
	b.ReportMetric(s.held.mean(), "held-loads/key")
	b.ReportMetric(float64(s.held.max), "held-max-loads")
	b.ReportMetric(float64(s.unheld.keys), "unheld-keys")
	b.ReportMetric(s.unheld.mean(), "unheld-loads/key")
	b.ReportMetric(float64(s.unheld.max), "unheld-max-loads")
	b.ReportMetric(float64(s.held.over2+s.unheld.over2), "keys-over-2")
	b.ReportMetric(float64(s.hot.keys), "hot-keys")
	b.ReportMetric(float64(s.hot.loads), "hot-loads")
	b.ReportMetric(float64(s.hot.max), "hot-max-loads")
	if s.hotGets > 0 {
		b.ReportMetric(float64(s.hotHits)/float64(s.hotGets), "hot-hits/get")
	}
	b.Logf("held: %v", &s.held)
	b.Logf("not held: %v", &s.unheld)
	b.Logf("hottest %d (ranks < %d): %v; their Gets %d: %d hits at the node asked, of the fetches home answered %d from memory, %d not",
		s.hot.keys, mbHotKeys, &s.hot, s.hotGets, s.hotHits, s.hotHomeHits, s.hotHomeMisses)
	gaps := "none"
	if g := s.noUseGaps; len(g) > 0 {
		slices.Sort(g)
		ms := func(q int) float64 { return float64(g[(len(g)-1)*q/100]) / 1e6 }
		gaps = fmt.Sprintf("%d, after p10 %.0f ms, median %.0f ms, p90 %.0f ms", len(g), ms(10), ms(50), ms(90))
	}
	b.Logf("survivors in the window: %+v; home's reloads without a hit since its load: %s", s.stats, gaps)
	for _, k := range s.keys {
		b.Log(k)
	}
}

// survivorStats is the sum of some of the survivors' counters.
type survivorStats struct {
	LocalLoads, FallbackLoads, Hedges, HedgeWins, PeerBusy, NextPeer, EjectedLoads, Evictions int64
}

func sumStats(ns []*mbNode) (s survivorStats) {
	for _, n := range ns {
		st := n.group.Stats()
		s.LocalLoads += st.LocalLoads
		s.FallbackLoads += st.FallbackLoads
		s.Hedges += st.Hedges
		s.HedgeWins += st.HedgeWins
		s.PeerBusy += st.PeerBusy
		s.NextPeer += st.NextPeer
		s.EjectedLoads += st.EjectedLoads
		s.Evictions += st.Main.Evictions
	}
	return s
}

func (s survivorStats) minus(o survivorStats) survivorStats {
	return survivorStats{s.LocalLoads - o.LocalLoads, s.FallbackLoads - o.FallbackLoads, s.Hedges - o.Hedges,
		s.HedgeWins - o.HedgeWins, s.PeerBusy - o.PeerBusy, s.NextPeer - o.NextPeer, s.EjectedLoads - o.EjectedLoads,
		s.Evictions - o.Evictions}
}

// classify sorts the loads among evs (one key's events, in time order)
// into their classes; home is the node that should load the key. It
// appends to gaps (if not nil) the time from home's last load to each
// clNoUse load.
func classify(evs []mbEvent, home, victim int16, kill bool, gaps *[]int64) (c [nClasses]int) {
	var last int64
	homeLoads, used := 0, false
	for _, e := range evs {
		switch e.kind {
		case evClientHit, evServeHit:
			used = used || e.node == home
		case evLoad, evFallback:
			switch {
			case kill && e.node == victim:
				c[clVictim]++
			case e.kind == evFallback:
				c[clFallback]++
			case e.node != home:
				c[clOther]++
			case homeLoads == 0:
				c[clFirst]++
			case e.at-last < int64(mbLatency):
				c[clOverlap]++
			case used:
				c[clAfterUse]++
			default:
				c[clNoUse]++
				if gaps != nil {
					*gaps = append(*gaps, e.at-last)
				}
			}
			if e.node == home && e.kind == evLoad {
				last, used = e.at, false
				homeLoads++
			}
		}
	}
	return c
}

// describe lists evs, their times in ms from t0; a run of hits at one
// node is one item, "n x hit".
func describe(evs []mbEvent, t0 int64) string {
	names := [...]string{"load", "fallback", "client-hit", "client-miss", "serve-hit", "serve-miss", "fetch"}
	var b strings.Builder
	run, runNode := 0, int16(-1)
	flush := func() {
		if run > 0 {
			fmt.Fprintf(&b, " %dxhit@%d", run, runNode)
		}
		run = 0
	}
	for _, e := range evs {
		if e.kind == evClientHit || e.kind == evServeHit {
			if e.node != runNode {
				flush()
			}
			run, runNode = run+1, e.node
			continue
		}
		flush()
		fmt.Fprintf(&b, " %+.1fms@%d:%s", float64(e.at-t0)/1e6, e.node, names[e.kind])
		if e.kind == evPeer {
			fmt.Fprintf(&b, "->%d", e.peer)
		}
	}
	flush()
	if b.Len() > 700 {
		return b.String()[:700] + " …"
	}
	return b.String()
}

// killOwner crashes one node (no discovery change: the others eject it)
// and counts, for each of its keys asked in the next 10 s (short: 3 s),
// the loads it took cluster-wide, split by whether it held the key in
// memory at the kill. With kill false nothing is killed: the same count
// for the same node's keys is the control, what the steady churn of the
// budget costs alone. A budget that holds every key is warmed with every
// key first (prewarm), so that before the kill every key is held.
func killOwner(tb testing.TB, cfg mbConfig, window time.Duration, kill bool) mbResult {
	w := &mbWatch{}
	c := newMBClusterWatched(tb, cfg.nodes, cfg.keys, cfg.budget, cfg.drain, w)
	defer c.close()
	if cfg.budget >= mbWhole {
		c.prewarm(cfg.keys, cfg.clients)
	}
	cl := c.clients(cfg.clients, cfg.keys)
	time.Sleep(cfg.warm)
	s0 := c.waitSecond()
	time.Sleep(cfg.steady)
	s1 := c.waitSecond()
	var res mbResult
	res.steadyRate, _ = c.rate(s0, s1)
	ns := *c.lb.Load()
	victim, survivors := ns[0], ns[1:]
	own := make([]bool, cfg.keys)
	var ids []int
	for id := range own {
		if survivors[0].pool.Owner(mbKey(id)) == victim.addr {
			own[id] = true
			ids = append(ids, id)
		}
	}
	// home: the node that should load each key in the window.
	home := make(map[int]int16, len(ids))
	for _, id := range ids {
		home[id] = victim.serial
		if kill {
			home[id] = survivors[0].serial
			if p, _, _ := survivors[0].pool.PickFallback(mbKey(id), nil); p != nil {
				home[id] = w.serialOf(p.Addr())
			}
		}
	}
	var held []bool
	if !kill {
		// What it holds now (it goes on serving: a moment's change). Each
		// request counts as a use of a key it holds.
		held = heldAt(victim, ids)
	}
	st0 := sumStats(survivors)
	w.watch(own)
	if kill {
		c.publish(victim)
	}
	before := c.src.loads()
	killed := time.Now().UnixNano()
	if kill {
		c.stop(victim, true)
	}
	time.Sleep(window)
	after := c.src.loads()
	events := w.stop()
	split := &killSplit{stats: sumStats(survivors).minus(st0)}
	res.evictions = split.stats.Evictions
	asked := make([]int64, len(cl.asked))
	for i := range asked {
		asked[i] = cl.asked[i].Load()
	}
	if kill {
		// Its memory as the kill left it: nothing has reached it since.
		held = heldAt(victim, ids)
		// It comes back, empty, at the same address: how long until every
		// survivor has readmitted it (they see clients' Gets of its keys).
		c.start(victim.addr[len("http://"):])
		back := time.Now()
		for time.Since(back) < 30*time.Second && c.ejecting(survivors, victim.addr) {
			time.Sleep(20 * time.Millisecond)
		}
		res.readmit = time.Since(back)
	}
	cl.end()
	byKey := map[int32][]mbEvent{}
	for _, e := range events {
		byKey[e.id] = append(byKey[e.id], e)
	}
	var sum, n int64
	for i, id := range ids {
		if asked[id] < killed {
			continue
		}
		d := after[id] - before[id]
		sum += int64(d)
		n++
		res.perKeyMax = max(res.perKeyMax, d)
		if d > 1 {
			res.reloaded++
		}
		cls := classify(byKey[int32(id)], home[id], victim.serial, kill, &split.noUseGaps)
		if d > 2 && len(split.keys) < mbLogKeys {
			split.keys = append(split.keys, fmt.Sprintf("key %d (held %v, %d loads, home node %d):%s",
				id, held[i], d, home[id], describe(byKey[int32(id)], killed)))
		}
		if held[i] {
			split.held.add(int(d), cls)
		} else {
			split.unheld.add(int(d), cls)
		}
		if id < mbHotKeys {
			split.hot.add(int(d), cls)
			for _, e := range byKey[int32(id)] {
				switch {
				case e.kind == evClientHit:
					split.hotGets++
					split.hotHits++
				case e.kind == evClientMiss:
					split.hotGets++
				case e.kind == evServeHit && e.node == home[id]:
					split.hotHomeHits++
				case e.kind == evServeMiss && e.node == home[id]:
					split.hotHomeMisses++
				}
			}
		}
	}
	if n > 0 {
		res.perKeyMean = float64(sum) / float64(n)
	}
	res.held = int(n)
	res.extra = float64(sum)
	res.split = split
	_, res.peak = c.rate(s1, c.second())
	res.gets, res.errs, res.wrong = cl.gets.Load(), cl.errs.Load(), cl.wrong.Load()
	return res
}

func BenchmarkKillOwner(b *testing.B) {
	w := 10 * time.Second
	if testing.Short() {
		w = 3 * time.Second
	}
	for _, bud := range []struct {
		name   string
		budget int64
	}{{"256KiB", mbSmall}, {"whole", mbWhole}} {
		for _, kill := range []bool{true, false} {
			name := bud.name + "/kill"
			if !kill {
				name = bud.name + "/control"
			}
			b.Run(name, func(b *testing.B) {
				for range b.N {
					killOwner(b, mbConfigFor(testing.Short(), bud.budget), w, kill).report(b)
				}
			})
		}
	}
}

// ejecting reports whether any of nodes has addr ejected.
func (c *mbCluster) ejecting(nodes []*mbNode, addr string) bool {
	for _, n := range nodes {
		for _, p := range n.group.Stats().Peers {
			if p.Addr == addr && p.Ejected {
				return true
			}
		}
	}
	return false
}
