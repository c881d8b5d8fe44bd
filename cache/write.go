package cache

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"time"
)

// ownerGrace is how long a write waits for the owner peer's answer before
// it tells the other nodes anyway (at most half the caller's time left).
// A healthy owner answers well within it, and the others are then told
// once, after it; a hung or slow one does not hold them up for longer.
const ownerGrace = 100 * time.Millisecond

// errEjected is the failure of a write not sent to a peer that this node
// has ejected: it is not waited for, and retried in the background.
var errEjected = errors.New("the peer is ejected: not asked now, retried in the background")

// A write is one Remove or Set of a key, as it is told to the nodes.
type write struct {
	g     *Group
	key   string
	owner Peer // the owner peer, or nil when this node owns the key
	apply func(ctx context.Context, p Peer, owner bool) error
}

// tell sends the write to peer p, within ctx and PeerPolicy.SlowAfter, so
// that each peer has its own share of the caller's time. With skipEjected,
// a peer that is ejected is not asked: it fails at once.
func (w *write) tell(ctx context.Context, p Peer, owner, skipEjected bool) (err error) {
	if skipEjected && w.g.health.isEjected(p) {
		return errEjected
	}
	defer func() {
		if r := recover(); r != nil { // it runs on a goroutine of its own
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, w.g.policy.SlowAfter)
	defer cancel()
	start := time.Now()
	err = w.apply(ctx, p, owner)
	// What a write shows of the peer counts toward its health as a
	// fetch's answer does, except that a failure counts only if the peer
	// has not answered in SlowAfter (hung, as for a fetch): a peer that
	// refuses writes (unsigned, say) may serve reads well.
	if ph := w.g.health.of(p); ph != nil {
		switch {
		case err == nil:
			w.g.health.done(ph, outcomeSuccess, false)
		case time.Since(start) >= w.g.policy.SlowAfter:
			w.g.health.done(ph, outcomeFailure, false)
		}
	}
	return err
}

// pass tells owner (nil: no owner peer to tell) and the peers of others
// of the write, and returns the answer of each peer it told, by address
// (nil: the peer confirmed). Peers not in pending (by address; nil means
// all) have confirmed before and are told again only if the owner
// confirms now.
//
// The order: a node that drops its copy before the owner has changed may
// fetch the old value from the owner again, and keep it. So the others are
// told after the owner has confirmed, as long as the owner answers within
// ownerGrace: one message each, no stale copy. An owner that has not
// answered by then (hung, slow, or skipped as ejected) no longer holds them
// up: the pending ones are told at once, and if the owner then confirms,
// every other node (this one included) is told again, and that second
// answer counts. A peer told before the owner confirmed, with the owner
// named, has dropped its copy but may fetch the owner's old one again, as
// UpdateError says.
func (w *write) pass(ctx context.Context, owner Peer, others []Peer, pending map[string]bool, skipEjected bool) map[string]error {
	results := make(map[string]error, len(others)+1)
	var mu sync.Mutex
	record := func(p Peer, err error) {
		mu.Lock()
		results[p.Addr()] = err
		mu.Unlock()
	}
	ownerDone := make(chan struct{})
	ownerOK := false
	var wg sync.WaitGroup
	if owner != nil {
		wg.Go(func() {
			err := w.tell(ctx, owner, true, skipEjected)
			record(owner, err)
			ownerOK = err == nil
			close(ownerDone)
		})
	} else {
		close(ownerDone)
	}
	late := !waitOwner(ctx, ownerDone)
	for _, p := range others {
		pend := pending == nil || pending[p.Addr()]
		if !pend && owner == nil {
			continue
		}
		wg.Go(func() {
			told := false
			var err error
			if late && pend {
				err, told = w.tell(ctx, p, false, skipEjected), true
			}
			<-ownerDone
			if (owner != nil && ownerOK) || (!late && pend) {
				err, told = w.tell(ctx, p, false, skipEjected), true
			}
			if told {
				record(p, err)
			}
		})
	}
	wg.Wait()
	if owner != nil && ownerOK {
		w.g.removeLocal(w.key) // this node too may have fetched the old value meanwhile
	}
	return results
}

// waitOwner waits for done for up to ownerGrace, or half the time ctx has
// left, and reports whether done came.
func waitOwner(ctx context.Context, done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
	}
	grace := ownerGrace
	if dl, ok := ctx.Deadline(); ok {
		grace = min(grace, time.Until(dl)/2)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
