package history

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A Workload is a history to run on a cluster: writers and readers on
// random nodes and keys, for a bounded time and number of operations.
type Workload struct {
	// Nodes is the size of the cluster, and Group(i) the group of node i
	// now (a node that restarts has a new one). An operation whose node
	// restarted while it ran counts as failed, as its caller would have
	// seen the connection fail: a write unacknowledged, a read unanswered.
	Nodes int
	Group func(i int) *cache.Group
	// Source is every node's source; Keys the keys asked for, all in it.
	Source *Source
	Keys   []string

	Writers, Readers int
	Duration         time.Duration // at most, but see MinReads
	MaxOps           int           // per worker, at most
	Seed             uint64

	// MinReads and MinAcked, if set, keep the workload going past
	// Duration (up to ten times it) until that many reads and
	// acknowledged writes are recorded, so that a slow host (a js/wasm
	// node under load) still checks enough.
	MinReads, MinAcked int

	// CacheOnly leaves the source alone: a Set's value is in the cache
	// only, and a Remove brings back the source's value. A value that
	// only the owner's memory holds is lost when the owner cannot answer
	// (the other nodes load the source then), so run it on a healthy
	// cluster.
	CacheOnly bool

	// Fault, if set, runs beside the workload with its own random
	// numbers, and must return when ctx ends.
	Fault func(ctx context.Context, rng *rand.Rand)
}

// put writes v to the source, unless the workload leaves it alone; it
// returns the value the write makes key's, as a read would see it.
func (w Workload) put(key, v string, set bool) string {
	if !w.CacheOnly {
		w.Source.Put(key, v)
		return v
	}
	if set {
		return v
	}
	return Initial(key)
}

// Run runs w and checks its history. After the writers and readers end
// (and Fault with them), every node reads every key once more: a copy
// that a write did not reach shows up there even if no later write came.
func Run(ctx context.Context, w Workload) Report {
	rec := NewRecorder()
	limit := w.Duration
	if w.MinReads > 0 || w.MinAcked > 0 {
		limit = 10 * w.Duration
	}
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	soft := time.Now().Add(w.Duration)
	var reads, acked atomic.Int64
	more := func() bool {
		return runCtx.Err() == nil && (time.Now().Before(soft) ||
			reads.Load() < int64(w.MinReads) || acked.Load() < int64(w.MinAcked))
	}
	var workers, fault sync.WaitGroup
	for i := range w.Writers {
		rng := rand.New(rand.NewPCG(w.Seed, uint64(i)))
		workers.Go(func() { writer(runCtx, w, rec, i, rng, more, &acked) })
	}
	for i := range w.Readers {
		rng := rand.New(rand.NewPCG(w.Seed, uint64(1000+i)))
		workers.Go(func() { reader(runCtx, w, rec, rng, more, &reads) })
	}
	faultCtx, stopFault := context.WithCancel(runCtx)
	if w.Fault != nil {
		rng := rand.New(rand.NewPCG(w.Seed, 2000))
		fault.Go(func() { w.Fault(faultCtx, rng) })
	}
	workers.Wait()
	stopFault()
	fault.Wait()
	for n := range w.Nodes {
		for _, k := range w.Keys {
			read(ctx, w, rec, n, "get", []string{k})
		}
	}
	return Check(rec.Ops())
}

const opTimeout = 5 * time.Second

// writer changes the source and then the cache, as a user does: Put and
// Set, Put and Remove, Delete and Remove, Puts and RemoveMany; now and
// then a Purge, which writes nothing.
func writer(ctx context.Context, w Workload, rec *Recorder, id int, rng *rand.Rand, more func() bool, nAcked *atomic.Int64) {
	for seq := 0; seq < w.MaxOps && more(); seq++ {
		node := rng.IntN(w.Nodes)
		g := w.Group(node)
		key := w.Keys[rng.IntN(len(w.Keys))]
		val := fmt.Sprintf("w%d.%d:%s", id, seq, key)
		opCtx, cancel := context.WithTimeout(context.Background(), opTimeout)
		// A write of keys[i] makes vals[i] its value, as a read would see it.
		var (
			what       string
			keys, vals []string
			err        error
		)
		start := rec.Now()
		switch p := rng.IntN(100); {
		case p < 55:
			what, keys, vals = "set", []string{key}, []string{w.put(key, val, true)}
			err = g.Set(opCtx, key, []byte(vals[0]), 0)
		case p < 75:
			what, keys, vals = "remove", []string{key}, []string{w.put(key, val, false)}
			err = g.Remove(opCtx, key)
		case p < 85 && !w.CacheOnly:
			what, keys, vals = "remove", []string{key}, []string{Missing}
			w.Source.Delete(key)
			err = g.Remove(opCtx, key)
		case p < 97:
			what, keys = "removemany", pick(w.Keys, 2+rng.IntN(2), rng)
			start = rec.Now()
			for i, k := range keys {
				vals = append(vals, w.put(k, fmt.Sprintf("w%d.%d.%d:%s", id, seq, i, k), false))
			}
			err = g.RemoveMany(opCtx, keys)
		default:
			// A Purge writes nothing to the source; with CacheOnly it
			// brings back the source's value of every key.
			err = g.Purge(opCtx)
			if w.CacheOnly {
				what, keys = "purge", w.Keys
				for _, k := range keys {
					vals = append(vals, Initial(k))
				}
			}
		}
		end := rec.Now()
		acked := err == nil && w.Group(node) == g
		if acked {
			nAcked.Add(1)
		}
		for i, k := range keys {
			rec.Add(Op{Node: node, What: what, Key: k, Value: vals[i], Start: start, End: end, Write: true, Acked: acked})
		}
		cancel()
	}
}

// reader reads random keys on random nodes, one at a time (Get) or a few
// at once (GetMany).
func reader(ctx context.Context, w Workload, rec *Recorder, rng *rand.Rand, more func() bool, nReads *atomic.Int64) {
	for range w.MaxOps {
		if !more() {
			return
		}
		node := rng.IntN(w.Nodes)
		if rng.IntN(5) == 0 {
			read(ctx, w, rec, node, "getmany", pick(w.Keys, 2+rng.IntN(3), rng))
		} else {
			read(ctx, w, rec, node, "get", []string{w.Keys[rng.IntN(len(w.Keys))]})
		}
		nReads.Add(1)
		yield()
	}
}

// read reads keys on node (one: a Get; more: a GetMany) and records each.
func read(ctx context.Context, w Workload, rec *Recorder, node int, what string, keys []string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opTimeout)
	defer cancel()
	g := w.Group(node)
	start := rec.Now()
	got := make([]Op, len(keys))
	answer := func(i int, v cache.ByteView, err error) {
		op := Op{Node: node, What: what, Key: keys[i], Start: start}
		switch {
		case err == nil:
			op.Value, op.OK = v.String(), true
		case errors.Is(err, getter.ErrNotFound):
			op.Value, op.OK = Missing, true
		}
		got[i] = op
	}
	if len(keys) == 1 {
		v, err := g.Get(ctx, keys[0])
		answer(0, v, err)
	} else {
		g.GetMany(ctx, keys, answer)
	}
	end := rec.Now()
	alive := w.Group(node) == g
	for i := range got {
		got[i].End = end
		if !alive {
			// The node restarted during the read: its caller would have
			// seen the connection fail, not an answer.
			got[i].OK = false
		}
	}
	rec.Add(got...)
}

// pick returns n distinct keys of keys (all of them if n is larger).
func pick(keys []string, n int, rng *rand.Rand) []string {
	p := rng.Perm(len(keys))
	out := make([]string, 0, n)
	for _, i := range p[:min(n, len(keys))] {
		out = append(out, keys[i])
	}
	return out
}
