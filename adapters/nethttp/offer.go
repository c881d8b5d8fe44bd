package nethttp

import (
	"context"
	"sync"
)

// A node offers keys (adapters/PROTOCOL.md, "Offer") when its ring
// changes, to the nodes that own the keys it held now (a node that joins,
// or comes back after a restart, gets its keys back at once), and when it
// leaves (Pool.Drain), to the owners of its keys without it. Each run offers
// the keys' names; the owners take the values from this node's memory.
// The Pool starts a group's run with cache.Group.OfferKeys; the owners
// answer its offers in cache.Registry.ServePeer (an OpOffer).

// offers runs the Pool's offers after a change of its ring, each
// bounded by the drain's length: a new change cancels the one under way
// (which ends with its requests) and starts its own; Close cancels the last
// and waits for every one started before it. Nothing here is a
// sync.WaitGroup, whose Add must not run concurrently with its Wait: a Set
// may start an offer while a Close waits. Instead each offer's done
// channel closes once it has ended and so has the one before it, so the
// last one's channel stands for all of them.
type offers struct {
	mu     sync.Mutex
	cancel context.CancelFunc // the last offer's
	done   chan struct{}      // closed when the last offer and every one before it have ended
}

// ringChanged starts an offer of the keys the ring moved (picker's
// OnChange: it returns at once).
func (p *Pool) ringChanged() {
	h := &p.offers
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancel != nil {
		h.cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.drainFor)
	prev, done := h.done, make(chan struct{})
	h.cancel, h.done = cancel, done
	go func() {
		defer close(done)
		p.offerKeys(ctx)
		cancel()
		if prev != nil {
			<-prev // cancelled above: it ends with its requests
		}
	}()
}

// stopOffers cancels the offer under way and waits for it and for
// every one started before it; one that a concurrent Set starts after it
// took the lock is left to run.
func (p *Pool) stopOffers() {
	h := &p.offers
	h.mu.Lock()
	if h.cancel != nil {
		h.cancel()
	}
	done := h.done
	h.mu.Unlock()
	if done != nil {
		<-done
	}
}

// offerKeys offers every group's keys, the groups at once, until ctx
// ends.
func (p *Pool) offerKeys(ctx context.Context) {
	var wg sync.WaitGroup
	for _, name := range p.reg.Names() {
		if g := p.reg.Lookup(name); g != nil {
			wg.Go(func() { g.OfferKeys(ctx) })
		}
	}
	wg.Wait()
}
