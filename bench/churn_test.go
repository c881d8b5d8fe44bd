package bench

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkKillOwnerFloor is BenchmarkKillOwner at 256 KiB (the kill, and
// the control without it) with clients that record every Get, so that the
// floor of BenchmarkChurnFloor is computed on the very key sequence the
// run served: its loads/dead-key depends on how many Gets the machine
// served in the 10 s (fewer on a loaded machine, fewer loads per key), and
// the floors on the same sequence do not share that noise. Reported: the
// run's loads per dead-owner key asked in the window, as
// BenchmarkKillOwner counts them, and on the dead owner's share of the
// recorded sequence, with as many entries as its main cache held at the
// kill: opt, a0 and geecache (one group replaying the sequence offline),
// and a0-budget, a0 with the whole budget's entries (no hot cache).
func BenchmarkKillOwnerFloor(b *testing.B) {
	w := 10 * time.Second
	if testing.Short() {
		w = 3 * time.Second
	}
	for _, kill := range []bool{true, false} {
		name := "kill"
		if !kill {
			name = "control"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				churnFloorRun(b, mbConfigFor(testing.Short(), mbSmall), w, kill)
			}
		})
	}
}

// A churnGet is one recorded Get: when it was sent, and its key.
type churnGet struct {
	at int64
	id int
}

func churnFloorRun(b *testing.B, cfg mbConfig, window time.Duration, kill bool) {
	c := newMBCluster(b, cfg.nodes, cfg.keys, cfg.budget, cfg.drain)
	defer c.close()
	stop := make(chan struct{})
	logs := make([][]churnGet, cfg.clients)
	var wg sync.WaitGroup
	var errs, wrong int
	var mu sync.Mutex
	for i := range cfg.clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 18))
			z := rand.NewZipf(r, 1.01, 1, uint64(cfg.keys-1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				ns := *c.lb.Load()
				node := ns[r.IntN(len(ns))]
				id := int(z.Uint64())
				logs[i] = append(logs[i], churnGet{time.Now().UnixNano(), id})
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				v, err := node.group.Get(ctx, mbKey(id))
				cancel()
				if err != nil || !v.EqualBytes(mbValueOf(mbKey(id))) {
					mu.Lock()
					if err != nil {
						errs++
					} else {
						wrong++
					}
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(cfg.warm + cfg.steady)
	ns := *c.lb.Load()
	victim := ns[0]
	entries := int(victim.group.Stats().Main.Items)
	if kill {
		c.publish(victim)
	}
	before := c.src.loads()
	killed := time.Now().UnixNano()
	if kill {
		c.stop(victim, true)
	}
	time.Sleep(window)
	end := time.Now().UnixNano()
	after := c.src.loads()
	close(stop)
	wg.Wait()
	var all []churnGet
	for _, l := range logs {
		all = append(all, l...)
	}
	slices.SortFunc(all, func(a, b churnGet) int { return int(a.at - b.at) })
	owner := map[int]bool{}
	owns := func(id int) bool {
		o, ok := owner[id]
		if !ok {
			o = ns[1].pool.Owner(mbKey(id)) == victim.addr
			owner[id] = o
		}
		return o
	}
	var trace []int
	warm := -1
	for _, g := range all {
		if g.at >= end || !owns(g.id) {
			continue
		}
		if warm < 0 && g.at >= killed {
			warm = len(trace)
		}
		trace = append(trace, g.id)
	}
	var sum, n int
	asked := map[int]bool{}
	for _, id := range trace[warm:] {
		asked[id] = true
	}
	for id := range asked {
		sum += int(after[id] - before[id])
		n++
	}
	b.ReportMetric(float64(sum)/float64(n), "loads/dead-key")
	b.ReportMetric(floorOpt(entries, trace, warm), "opt-loads/key")
	b.ReportMetric(floorA0(entries, owns, trace, warm), "a0-loads/key")
	b.ReportMetric(floorA0(int(cfg.budget)/(7+mbValue), owns, trace, warm), "a0-budget-loads/key")
	b.ReportMetric(floorGeeCache(b, entries, trace, warm), "geecache-loads/key")
	b.ReportMetric(float64(len(trace)-warm), "window-gets")
	b.ReportMetric(float64(entries), "main-entries")
	b.ReportMetric(float64(errs), "errors")
	b.ReportMetric(float64(wrong), "wrong")
	if errs+wrong > 0 {
		b.Errorf("%d errors, %d wrong values", errs, wrong)
	}
}
