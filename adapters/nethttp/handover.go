package nethttp

import (
	"context"
	"sync"

	"github.com/geecache/geecache/internal/groupbridge"
)

// A node hands keys over (adapters/PROTOCOL.md, "Handover") when its ring
// changes, to the nodes that own the keys it held now (a node that joins,
// or comes back after a restart, gets its keys back at once), and when it
// leaves (Shutdown), to the owners of its keys without it. Each run offers
// the keys' names; the owners take the values from this node's memory.
// The Pool starts a group's run with groupbridge.HandOver, a call of the
// group's own that only this module's transports reach (the server side,
// an owner taking an offer, is groupbridge.TakeOffer in the protocol's
// batch server).

// handovers runs the Pool's handovers after a change of its ring, each
// bounded by the drain's length: a new change cancels the one under way
// (which ends with its requests) and starts its own; Close cancels the last
// and waits for every one.
type handovers struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// ringChanged starts a handover of the keys the ring moved (picker's
// OnChange: it returns at once).
func (p *Pool) ringChanged() {
	h := &p.handovers
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancel != nil {
		h.cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.drainFor)
	h.cancel = cancel
	h.wg.Go(func() {
		defer cancel()
		p.handOver(ctx)
	})
}

// stopHandovers cancels the handover under way and waits for it.
func (p *Pool) stopHandovers() {
	h := &p.handovers
	h.mu.Lock()
	if h.cancel != nil {
		h.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// handOver hands every group's keys over, the groups at once, until ctx
// ends.
func (p *Pool) handOver(ctx context.Context) {
	var wg sync.WaitGroup
	for _, name := range p.reg.Names() {
		if g := p.reg.Lookup(name); g != nil {
			wg.Go(func() { groupbridge.HandOver(ctx, g) })
		}
	}
	wg.Wait()
}
