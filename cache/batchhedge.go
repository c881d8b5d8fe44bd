package cache

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// This file is a batch's request to its owner (batchfetch.go decides what
// becomes of each key): fetch sends it, complete checks the answer.

// fetch sends the batch and waits for it: if the owner is silent (see
// hedgeTimer), every key is loaded locally beside it (through the local
// flight), and each key takes whichever answer comes first. The delay is
// the batches' own (g.batchLatency): a batch takes longer to answer than
// one key, and a hedge costs it a load per key, so the single fetches'
// delay would hedge a healthy owner's batches. It returns the batch's
// error, whether the hedge ran (keys it decided are done in out), and
// whether the batch answered (else b.answers may still change).
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
	// send returns the batch's error, and its outcome for the owner's
	// health: an older peer that asked to be asked key by key is alive.
	send := func(fctx context.Context, t *hedgeTimer) (err, outcome error) {
		err = peerBatch(fctx, b.owner, PeerRequest{Op: OpGet, Group: g.name, Keys: b.keys}, t, each)
		if err == nil {
			err = b.complete()
		}
		if errors.Is(err, errors.ErrUnsupported) {
			return err, nil
		}
		return err, err
	}
	if g.policy.NoHedge {
		err, outcome := send(ctx, nil)
		g.settle(ctx, ph, probe, outcome, ctx.Err() != nil)
		return false, true, err
	}
	var won atomic.Bool
	fctx, fcancel := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, func() {
		if !won.Load() {
			fcancel()
		}
	})
	silent := make(silence)
	t := new(hedgeTimer)
	t.arm(g, g.batchLatency, len(b.keys), silent)
	done := make(chan error, 1)
	go func() {
		defer fcancel()
		err, outcome := send(fctx, t)
		t.end(found(outcome))
		unhook()
		g.settle(ctx, ph, probe, outcome, !won.Load() && ctx.Err() != nil)
		done <- err
	}()
	select {
	case <-silent:
	case err := <-done:
		if !t.end(false) {
			return false, true, err
		}
		done <- err // the hedge started first: it takes the answer at once
	case <-ctx.Done():
		if !t.end(false) {
			return false, false, ctx.Err()
		}
	}
	// The hedge: every key loads locally beside the batch.
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
		time.AfterFunc(max(g.policy.SlowAfter-time.Since(t.begin), 0), fcancel)
		b.keepIfFailed(out, done)
	}
	return true, batchDone, berr
}

// A silence is the hedger of a batch: closed when its owner is silent.
type silence chan struct{}

func (s silence) hedge() { close(s) }

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

// complete checks that the peer answered every key once. If it did not,
// the keys it answered once are kept; the others are its failures, and
// the batch counts as a failure of the peer.
func (b *batch) complete() error {
	missing := 0
	for k := range b.got {
		if !b.got[k] {
			missing++
			b.answers[k] = keyAnswer{err: fmt.Errorf("geecache: peer %s: %w", b.owner.Addr(), errNotAnswered)}
			b.got[k] = true
		}
	}
	if missing == 0 && !b.extra {
		return nil
	}
	return fmt.Errorf("geecache: peer %s: %w: %d of %d keys missing, or answered more than once", b.owner.Addr(), errNotAnswered, missing, len(b.got))
}
