package cache

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/cache/internal/singleflight"
)

// noBatchFor is how long a peer that cannot batch is asked key by key
// before it is sent a batch again (it may have been upgraded meanwhile).
const noBatchFor = time.Minute

// errNotAnswered is the failure of a key that a peer left out of its
// answer to a batch (or answered twice, or under another index).
var errNotAnswered = errors.New("the peer did not answer this key of the batch")

// A batch is the keys of one GetMany that one owner peer is asked for,
// each claimed in the group's forward flight by this batch.
type batch struct {
	g      *Group
	owner  Peer
	ctx    context.Context // the caller's
	keys   []string
	idx    []int // each key's index in the GetMany
	claims []singleflight.Claim[entry, loadArg]
	gens   []uint64  // each key's generation from before it was looked up (memory.look)
	slots  loadSlots // the GetMany's bound on loads
	last   bool      // the owner is a failed owner's next node: no further step

	// The peer's answer, written by Batch's each before Batch returns.
	answers []keyAnswer
	got     []bool
	extra   bool // the peer answered an index twice or out of range
}

// keyAnswer is what a peer answered for one key (alone, or in a batch).
type keyAnswer struct {
	v   []byte
	ttl time.Duration
	err error
}

// A decision is one key's result and where it came from.
type decision struct {
	e      entry
	err    error
	done   bool
	local  bool // from a local load (kept already: in main, or a copy in hot)
	handed bool // handed over to a load in the background (abandon)
}

// run asks the owner for the batch's keys, settles each (see decide),
// and finishes their claims.
func (b *batch) run(res []manyResult) {
	g := b.g
	out := make([]decision, len(b.keys))
	defer func() {
		for k := range b.keys {
			g.forwardFlight.Finish(b.keys[k], b.claims[k], out[k].e, out[k].err)
			res[b.idx[k]] = manyResult{out[k].e, g.keyErr(b.keys[k], out[k].err)}
		}
	}()
	b.decide(out)
}

// decide asks the owner for the batch's keys and settles each in out: a
// value or "not found" from the owner is kept in the hot cache; a key the
// owner failed, left out or could not fit is loaded as Get would load it
// after such a failure (from the next live node on the ring, locally, or
// alone from the owner). The owner's health is checked and settled once
// for the whole batch.
func (b *batch) decide(out []decision) {
	g, n := b.g, len(b.keys)
	ph := g.health.of(b.owner)
	if ph != nil && !ph.batch.supported() {
		all := make([]int, n)
		for k := range all {
			all[k] = k
		}
		b.alone(out, all) // an older peer: no batch for a while
		return
	}
	probe := false
	if ph != nil {
		switch g.health.admit(ph) {
		case admitEjected:
			g.counters.ejectedLoads.Add(int64(n))
			g.probe(b.owner, ph, b.keys[0]) // as loadFromPeer does
			b.fallback(out, nil, true, nil)
			return
		case admitBusy:
			g.counters.peerBusy.Add(int64(n))
			b.copies(out)
			return
		case admitProbe:
			probe = true
		}
	}
	gens := b.gens
	b.answers, b.got = make([]keyAnswer, n), make([]bool, n)
	hedged, answered, berr := b.fetch(ph, probe, gens, out)
	single := errors.Is(berr, errors.ErrUnsupported) // an older peer, or a transport that cannot batch
	if single && ph != nil {
		ph.batch.refused()
	}
	var alone, local []int
	for k := range out {
		if out[k].done {
			continue
		}
		var a keyAnswer
		got := answered && b.got[k] // without the answer, the fetch may still write them
		if got {
			a = b.answers[k]
		}
		switch {
		case hedged:
		case got && found(a.err):
			g.counters.peerLoads.Add(1)
			out[k].e, out[k].err = g.keepPeer(b.keys[k], a, gens[k], !b.last)
			out[k].done = true
		case (single && !got) || (got && errors.Is(a.err, errors.ErrUnsupported)):
			alone = append(alone, k) // asked alone, as Get asks
		default:
			local = append(local, k)
		}
	}
	if len(alone) > 0 {
		b.alone(out, alone)
	}
	if len(local) == 0 {
		return
	}
	g.counters.peerErrors.Add(int64(len(local)))
	if b.ctx.Err() != nil {
		b.abandon(out, local, nil)
		return
	}
	why := berr
	if answered && b.got[local[0]] {
		why = b.answers[local[0]].err
	}
	g.warn.Log(b.ctx, slog.LevelWarn, "fail "+b.owner.Addr(), "geecache: peer failed keys of a batch, loading them elsewhere",
		slog.String("group", g.name), slog.Int("keys", len(local)), slog.Any("err", why))
	b.fallback(out, local, true, &g.counters.fallbacks)
}

// fallback loads the keys ks (nil: all) after their owner could not be
// asked, concurrently, as Group.fallback loads one: when next is set, the
// keys that have a next live node on the ring (not this one) are asked
// from it, in one batch per node, which loads them once for every node
// (it answers a batch itself, never forwards); that batch does not take a
// further step, so a key takes at most one. The others, and those its
// batch fails, are loaded here (counted in local, if not nil).
func (b *batch) fallback(out []decision, ks []int, next bool, local *atomic.Int64) {
	g := b.g
	if ks == nil {
		ks = make([]int, len(b.keys))
		for k := range ks {
			ks[k] = k
		}
	}
	var wg sync.WaitGroup
	here := ks
	if next && !b.last && g.router != nil {
		here = nil
		var subs []*batch
		var at [][]int // each sub-batch's keys, as indexes into b.keys
		for _, k := range ks {
			peer := g.nextNode(b.keys[k])
			if peer == nil {
				here = append(here, k)
				continue
			}
			j := 0
			for j < len(subs) && !samePeer(subs[j].owner, peer) {
				j++
			}
			if j == len(subs) {
				subs = append(subs, &batch{g: g, owner: peer, ctx: b.ctx, last: true, slots: b.slots})
				at = append(at, nil)
			}
			subs[j].keys = append(subs[j].keys, b.keys[k])
			subs[j].claims = append(subs[j].claims, b.claims[k])
			subs[j].gens = append(subs[j].gens, b.gens[k])
			at[j] = append(at[j], k)
		}
		g.counters.nextPeer.Add(int64(len(ks) - len(here)))
		for j, sub := range subs {
			wg.Go(func() {
				sout := make([]decision, len(sub.keys))
				sub.decide(sout)
				for s, k := range at[j] {
					// abandon may have taken a claim over (and zeroed it)
					out[k], b.claims[k] = sout[s], sub.claims[s]
				}
			})
		}
	}
	if local != nil {
		local.Add(int64(len(here)))
	}
	workers(len(here), wg.Go, func(p int) {
		k := here[p]
		b.slots.acquire()
		defer b.slots.release()
		var e entry
		var err error
		if g.router != nil {
			// As in Group.fallback: in the flight that answers the
			// other nodes' requests for it, so that it loads once here.
			e, err = g.localFlight.DoLoader(b.ctx, b.keys[k], (*localLoader)(g), loadArg{}) // the load asks who owns it
		} else {
			e, err = g.loadLocally(b.ctx, spanFallback, b.keys[k], false, b.gens[k])
		}
		out[k] = decision{e: e, err: err, done: true, local: true}
	})
	wg.Wait()
}

// copies loads every key of the batch here, concurrently, for an owner
// that is busy: it is alive and holds them, so each is a copy (loadCopy),
// as Get's is.
func (b *batch) copies(out []decision) {
	var wg sync.WaitGroup
	workers(len(b.keys), wg.Go, func(k int) {
		b.slots.acquire()
		defer b.slots.release()
		e, err := b.g.loadCopy(b.ctx, b.keys[k], b.gens[k])
		out[k] = decision{e: e, err: err, done: true, local: true}
	})
	wg.Wait()
}

// alone asks the owner for each key of ks by itself, as Get would: in
// the key's claim, run as a load of the forward flight (its claim is
// finished by that load, and zeroed here), so that a hedge beside a fetch
// from an owner that does not answer publishes its answer to the callers
// at once, as for Get, rather than after the fetch ends.
func (b *batch) alone(out []decision, ks []int) {
	g := b.g
	cls := make([]singleflight.Claim[entry, loadArg], len(ks))
	for p, k := range ks {
		cls[p], b.claims[k] = b.claims[k], singleflight.Claim[entry, loadArg]{}
	}
	var wg sync.WaitGroup
	workers(len(ks), wg.Go, func(p int) {
		k := ks[p]
		b.slots.acquire()
		defer b.slots.release()
		e, err := g.forwardFlight.Run(b.ctx, b.keys[k], cls[p], (*aloneLoader)(g), loadArg{owner: b.owner, next: !b.last, gen: b.gens[k]})
		out[k] = decision{e: e, err: err, done: true}
	})
	wg.Wait()
}

// aloneLoader fetches one key of a batch from its owner by itself
// (batch.alone): its argument names the owner to ask, whether a failed
// owner's key may take the step to the next node, and the key's
// generation the batch noted.
type aloneLoader Group

func (l *aloneLoader) Load(ctx context.Context, key string, a loadArg, f singleflight.Flight[entry, loadArg]) (entry, error) {
	return (*Group)(l).loadFromPeer(ctx, a.owner, key, a.next, a.gen, f)
}

// abandon ends the keys ks after the caller has gone: a key another caller
// still waits for is loaded for it in the background, in the local flight,
// so that it joins a load of the key in flight here (the hedge's, a peer's
// request) rather than calling the source again, and as a copy (loadCopy):
// the batch ended because the caller left, which says nothing against the
// owner; the others end with ctx's error. release, if not nil, is called
// with each key handed over once its load has ended (the hedge keeps its
// own load of the key going until then).
func (b *batch) abandon(out []decision, ks []int, release func(k int)) {
	g := b.g
	g.counters.abandoned.Add(int64(len(ks)))
	type handedKey struct {
		k  int
		cl singleflight.Claim[entry, loadArg]
	}
	var handed []handedKey
	for _, k := range ks {
		if !g.forwardFlight.Others(b.claims[k]) {
			out[k] = decision{err: b.ctx.Err(), done: true}
			continue
		}
		// Handed over: run finishes every claim, so this one is finished
		// here instead, once the load ends.
		handed = append(handed, handedKey{k, b.claims[k]})
		b.claims[k] = singleflight.Claim[entry, loadArg]{}
		out[k] = decision{err: b.ctx.Err(), done: true, handed: true}
	}
	bg := context.WithoutCancel(b.ctx)
	workers(len(handed), goStart, func(p int) {
		k, key, cl := handed[p].k, b.keys[handed[p].k], handed[p].cl
		b.slots.acquire()
		e, err := g.loadCopy(bg, key, b.gens[k])
		b.slots.release() // the owner did not fail (its batch was cancelled): a copy
		if release != nil {
			release(k)
		}
		g.forwardFlight.Finish(key, cl, e, err)
	})
}
