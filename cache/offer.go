package cache

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// This file is the offer of keys between nodes (PROTOCOL.md,
// "Offer"):
//   - a node whose ring moved keys it holds as their owner to other nodes
//     (a node joined, or came back), or that leaves (its picker names, for
//     each of its keys, the owner without it), offers them by name to their
//     new owners, the most used first (OfferKeys, an OpOffer per batch);
//   - a node offered keys takes those it owns now and does not hold from
//     their previous owner under its own ring, from its memory only, in one
//     OpPeek per previous owner (takeOffer), and keeps them as its own.
//
// An offer carries names only: the values come from a node the receiver's
// own ring names, so no caller can make a node store a value of its
// choosing, with or without a secret.

// Bounds of an offer.
const (
	// offerBatch is the keys per offer (and so per pull of the
	// receiver): an offer's answer waits for the pull, which must end well
	// within the sender's time.
	offerBatch = 256
	// offerMaxKeys is the most keys a node offers at once.
	offerMaxKeys = 1 << 20
	// offerSlots is how many offers a group takes at once; more wait for
	// a slot (within their request's life), so that a flood of offers
	// costs the receiver no more than offerSlots pulls, and a node that
	// joins, offered its keys by every node at once, still takes them all.
	offerSlots = 4
)

// offerState is a group's share of the offers.
type offerState struct {
	once  sync.Once
	slots chan struct{} // offers being taken; see offerSlots
}

// acquire waits for one of the offerSlots, or for ctx (the offer's
// request) to end: false.
func (h *offerState) acquire(ctx context.Context) bool {
	h.once.Do(func() { h.slots = make(chan struct{}, offerSlots) })
	select {
	case h.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (h *offerState) release() { <-h.slots }

// OfferKeys offers the keys of this node's main cache that another node
// owns now (by the PeerPicker), the most used first, to that node, which
// takes them from this node's memory rather than loading them again: up to
// 256 keys per OpOffer, the nodes at once. A transport calls it after its
// peer set changed (a node joined or came back), and before this node
// leaves, with a picker that no longer names it. A node that fails or
// refuses an offer is offered nothing more. It returns when every key was
// offered, or when ctx ends. It needs a PeerPicker that can name a key's
// previous owner (picker.Peers can); with another, it does nothing.
func (g *Group) OfferKeys(ctx context.Context) {
	if g.peers == nil || g.router == nil {
		return
	}
	var dests []ownerKeys
	keys := g.mem.main.Keys(offerMaxKeys, nil)
	for i, key := range keys {
		peer, remote := g.pickPeer(key)
		if !remote || peer == nil || g.health.isEjected(peer) {
			continue
		}
		j := 0
		for j < len(dests) && !samePeer(dests[j].peer, peer) {
			j++
		}
		if j == len(dests) {
			dests = append(dests, ownerKeys{peer: peer})
		}
		dests[j].idx = append(dests[j].idx, i)
	}
	var wg sync.WaitGroup
	for _, d := range dests {
		wg.Go(func() {
			batch := make([]string, 0, offerBatch)
			for lo := 0; lo < len(d.idx) && ctx.Err() == nil; lo += offerBatch {
				batch = batch[:0]
				for _, i := range d.idx[lo:min(lo+offerBatch, len(d.idx))] {
					batch = append(batch, keys[i])
				}
				if err := peerDo(ctx, d.peer, PeerRequest{Op: OpOffer, Group: g.name, Keys: batch}, manyKeys{}); err != nil {
					if ctx.Err() == nil {
						g.warn.Log(ctx, slog.LevelWarn, "offer "+d.peer.Addr(), "geecache: peer refused an offer, offering it no more",
							slog.String("group", g.name), slog.String("peer", d.peer.Addr()), slog.Any("err", err))
					}
					return
				}
				g.counters.offered.Add(int64(len(batch)))
			}
		})
	}
	wg.Wait()
}

// takeOffer takes the keys of an offer that this node owns and does not
// hold fresh in main from their previous owner (under this node's ring,
// within its handoff window), and the keys whose owner this node is the
// successor of from that owner (an offer from a leaving node that this
// node's ring still holds: this node owns them once the ring drops it), if
// that node is a live peer: it asks each such node for its keys in one
// OpPeek and keeps what it holds in main, credited as taken
// over. A copy in hot becomes its own at once. Other keys are left alone:
// the offer names keys, it is not trusted to say where they are. It
// returns when the pulls end (they end with ctx, the offer's request).
func (g *Group) takeOffer(ctx context.Context, keys []string) {
	if len(keys) == 0 || g.router == nil || g.hotBlocked() || !g.offer.acquire(ctx) {
		// hotBlocked: a Purge is still reaching the peers; the previous
		// owner may hold values from before it.
		return
	}
	defer g.offer.release()
	var from []ownerKeys
	gens := make([]uint64, len(keys))
	for i, key := range keys {
		owner, remote := g.pickPeer(key)
		next, prev, _ := g.router.PickFallback(key, nil)
		if remote {
			// The offer came before this node's ring dropped the node
			// that offers (a leaving node's discovery has not reached it
			// yet): take the key if this node is the owner's successor,
			// its owner once that node is gone, from the owner itself.
			if next != nil || owner == nil {
				continue
			}
			prev = owner
		}
		gens[i] = g.mem.generation(key) // before the look (see memory.gens)
		if _, exp, ok := g.mem.main.Peek(key); ok && g.fresh.isFresh(exp) {
			continue
		}
		if g.mem.wroteWithin(key, g.writeReach()) {
			continue // the previous owner may not know of the write yet
		}
		if g.mem.promote(key, g.fresh.nanos()) {
			// A copy this node fetched from the key's owner before: its
			// own now.
			g.creditMoved(key)
			g.counters.takenOver.Add(1)
			continue
		}
		if prev == nil || g.health.isEjected(prev) {
			continue
		}
		j := 0
		for j < len(from) && !samePeer(from[j].peer, prev) {
			j++
		}
		if j == len(from) {
			from = append(from, ownerKeys{peer: prev})
		}
		from[j].idx = append(from[j].idx, i)
	}
	for _, f := range from {
		if ctx.Err() != nil {
			return
		}
		g.pull(ctx, f.peer, keys, f.idx, gens)
	}
}

// pull asks prev, from its memory only, for the keys of idx and keeps each
// value (or cached "not found") it answers in main, unless the key changed
// here since its generation in gens (by index in keys).
func (g *Group) pull(ctx context.Context, prev Peer, keys []string, idx []int, keyGens []uint64) {
	ks := make([]string, len(idx))
	gens := make([]uint64, len(idx))
	for n, i := range idx {
		ks[n], gens[n] = keys[i], keyGens[i]
	}
	_ = peerBatch(ctx, prev, PeerRequest{Op: OpPeek, Group: g.name, Keys: ks}, nil, func(n int, v []byte, ttl time.Duration, err error) {
		if n < 0 || n >= len(ks) || !found(err) || (ttl > 0 && ttl <= time.Millisecond) {
			return // not held, damaged, or all but expired: the key loads when asked
		}
		if ttl < 0 {
			ttl = g.fresh.ttl
			if err != nil {
				ttl = g.fresh.notFoundTTL
			}
		}
		if g.hotBlocked() {
			return
		}
		_, _ = g.keep(g.mem.main, ks[n], v, ttl, err, gens[n])
		g.creditMoved(ks[n])
		g.counters.takenOver.Add(1)
	})
}

// heldMany answers a peer's OpPeek of many keys: each key as held answers
// it.
func (g *Group) heldMany(keys []string, res []manyResult) {
	for i, key := range keys {
		g.counters.handoffRequests.Add(1)
		res[i].e, res[i].err = g.held(key)
	}
}
