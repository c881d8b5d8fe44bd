package cache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// This file is a batch's request to its owner (batchfetch.go decides what
// becomes of each key): fetch sends it and waits for it, racing a local
// load of every key if the owner is slow to show it is alive, as
// fetchHedged does for one key (hedge.go); complete checks the answer.

// fetch sends the batch and waits for it as fetchHedged waits for one
// key: if the owner neither answers nor says it is loading within the
// hedge delay, every key is loaded locally beside it (through the local
// flight), and each key takes whichever answer comes first. The delay is
// the batches' own (g.batchLatency: the 99th percentile of the time recent
// batches took to show their owner alive): a batch takes longer to answer
// than one key, and a hedge costs it a load per key, so the single
// fetches' delay would hedge a healthy owner's batches. It returns
// the batch's error, whether the hedge ran (keys it decided are done in
// out), and whether the batch answered (else b.answers may still change).
func (b *batch) fetch(ph *peerHealth, probe bool, gens []uint64, out []decision) (hedged, answered bool, err error) {
	g, ctx := b.g, b.ctx
	each := func(i int, v []byte, ttl time.Duration, err error) {
		if i < 0 || i >= len(b.got) {
			b.extra = true
			return
		}
		if b.got[i] { // answered twice: believe neither
			b.extra = true
			b.answers[i] = keyAnswer{err: fmt.Errorf("geecache: peer %s: %w (answered twice)", b.owner.Addr(), errNotAnswered)}
			return
		}
		b.got[i], b.answers[i] = true, keyAnswer{v, ttl, err}
	}
	var loading func() // the hedge's, once it waits: the owner's signs that it is loading
	send := func(fctx context.Context) error {
		err := peerBatch(fctx, b.owner, PeerRequest{Op: OpGet, Group: g.name, Keys: b.keys}, loading, each)
		if err == nil {
			err = b.complete()
		}
		return err
	}
	outcome := func(err error) error {
		if errors.Is(err, errors.ErrUnsupported) {
			return nil // an older peer, alive: it asked to be asked key by key
		}
		return err
	}
	if g.policy.NoHedge {
		err := send(ctx)
		g.settle(ctx, ph, probe, outcome(err), ctx.Err() != nil)
		return false, true, err
	}
	var won atomic.Bool
	fctx, fcancel := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, func() {
		if !won.Load() {
			fcancel()
		}
	})
	signs := make(chan struct{}, 1) // the owner said it is loading (again)
	var seen atomic.Bool
	begin := time.Now()
	loading = func() {
		if seen.CompareAndSwap(false, true) {
			g.batchLatency.record(time.Since(begin))
		}
		select {
		case signs <- struct{}{}:
		default:
		}
	}
	done := make(chan error, 1)
	go func() {
		defer fcancel()
		err := send(fctx)
		if found(outcome(err)) && seen.CompareAndSwap(false, true) {
			g.batchLatency.record(time.Since(begin)) // it answered: alive (alive stays open: done tells)
		}
		unhook()
		g.settle(ctx, ph, probe, outcome(err), !won.Load() && ctx.Err() != nil)
		done <- err
	}()
	// The hedge starts when the owner has been silent for the hedge
	// delay, or for HedgeMax since its last sign that it is loading: a
	// live owner's load is waited for however long it takes.
	timer := time.NewTimer(g.batchLatency.hedgeDelay())
	defer timer.Stop()
	for silent := false; !silent; {
		select {
		case err := <-done:
			return false, true, err
		case <-ctx.Done():
			return false, false, ctx.Err()
		case <-signs:
			timer.Reset(g.policy.HedgeMax)
		case <-timer.C:
			silent = true
		}
	}
	// The hedge: every key loads locally beside the batch.
	g.counters.hedges.Add(int64(len(b.keys)))
	type localDone struct {
		k   int
		e   entry
		err error
	}
	hdone := make(chan localDone, len(b.keys))
	// Each key's local load waits on a context of its own, which ends
	// with the fetch, or for a key handed over when the caller leaves
	// (abandon), once the load it was handed to, which joins this one,
	// has ended: so that this one is not cancelled first.
	hctx := make([]context.Context, len(b.keys))
	hcancel := make([]context.CancelFunc, len(b.keys))
	for k := range b.keys {
		hctx[k], hcancel[k] = context.WithCancel(context.WithoutCancel(ctx))
	}
	workers(len(b.keys), goStart, func(k int) {
		b.slots.acquire()
		e, err := g.loadCopy(hctx[k], b.keys[k], gens[k])
		b.slots.release()
		hdone <- localDone{k, e, err}
	})
	defer func() {
		for k := range b.keys {
			if !out[k].handed {
				hcancel[k]()
			}
		}
	}()
	local := make([]*localDone, len(b.keys))
	var berr error
	batchDone := false
	left := len(b.keys)
	decide := func(k int, e entry, err error, fromLocal bool) {
		if !out[k].done {
			out[k] = decision{e: e, err: err, done: true, local: fromLocal}
			left--
			if fromLocal && err == nil {
				g.counters.hedgeLocalWins.Add(1) // the hedge answered this key first
			}
			// A hedge's copy is in hot. Decided after the batch, it stood in
			// for the fallback of a key the owner failed (one it asked to
			// be asked for alone is not failed): kept as the fallback keeps.
			if fromLocal && batchDone && found(err) && b.ownerFailed(k, berr) {
				g.keepFallback(b.keys[k], !b.last)
			}
		}
	}
	for left > 0 {
		select {
		case err := <-done:
			batchDone, berr = true, err
			for k := range b.keys {
				switch {
				case out[k].done:
				case b.got[k] && found(b.answers[k].err):
					g.counters.peerLoads.Add(1)
					e, kerr := g.keepPeer(b.keys[k], b.answers[k], gens[k], !b.last) // the generations from before the fetch
					decide(k, e, kerr, false)
				case local[k] != nil:
					decide(k, local[k].e, local[k].err, true)
				}
			}
		case d := <-hdone:
			local[d.k] = &d
			if found(d.err) || batchDone {
				decide(d.k, d.e, d.err, true)
			}
		case <-ctx.Done():
			// The caller left: the keys others joined load on for them
			// (abandon), as when it leaves before the hedge.
			var ks []int
			for k := range b.keys {
				if !out[k].done {
					ks = append(ks, k)
				}
			}
			b.abandon(out, ks, func(k int) { hcancel[k]() })
			left = 0
		}
	}
	if !batchDone {
		won.Store(true)
		time.AfterFunc(max(g.policy.SlowAfter-time.Since(begin), 0), fcancel)
		b.keepIfFailed(out, done)
	}
	return true, batchDone, berr
}

// keepIfFailed waits, in the background, for a batch whose keys the hedge
// decided before it ended (it ends by SlowAfter): if the owner fails them,
// the hedge's copies stood in for the fallback, and are kept as it keeps
// (keepFallback), as Get's are (its fetch is waited for). A key the owner
// answered, or asked to be asked for alone, keeps its copy in hot.
func (b *batch) keepIfFailed(out []decision, done <-chan error) {
	var kept []int
	for k := range out {
		if out[k].local && found(out[k].err) {
			kept = append(kept, k)
		}
	}
	if len(kept) == 0 {
		return
	}
	go func() {
		err := <-done
		if found(err) {
			return
		}
		for _, k := range kept {
			if b.ownerFailed(k, err) {
				b.g.keepFallback(b.keys[k], !b.last)
			}
		}
	}()
}

// ownerFailed reports whether the owner failed key k of the batch, which
// ended with berr: it did not answer the key with a value or a "not
// found", nor ask for it to be sent alone (errors.ErrUnsupported, for the
// batch or the key). Only then does a hedge's copy stand in for the
// fallback's load (keepFallback).
func (b *batch) ownerFailed(k int, berr error) bool {
	if errors.Is(berr, errors.ErrUnsupported) {
		return false
	}
	if !b.got[k] {
		return true
	}
	a := b.answers[k].err
	return !found(a) && !errors.Is(a, errors.ErrUnsupported)
}

// complete checks that the peer answered every key once.
func (b *batch) complete() error {
	missing := 0
	for k := range b.got {
		if !b.got[k] {
			missing++
		}
	}
	if missing == 0 && !b.extra {
		return nil
	}
	// The keys it answered once are kept; the others are its failures,
	// and the batch counts as a failure of the peer.
	for k := range b.got {
		if !b.got[k] {
			b.answers[k] = keyAnswer{err: fmt.Errorf("geecache: peer %s: %w", b.owner.Addr(), errNotAnswered)}
			b.got[k] = true
		}
	}
	return fmt.Errorf("geecache: peer %s: %w: %d of %d keys missing, or answered more than once", b.owner.Addr(), errNotAnswered, missing, len(b.got))
}
