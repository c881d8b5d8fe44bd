package cache

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/cache/internal/singleflight"
)

// This file is what a group does when the owner of a key cannot answer
// from memory because the cluster changed:
//   - a node that owns a key it does not hold asks the key's previous owner
//     (the ring before the last change, for a bounded window) for it, from
//     memory only, before it calls its Getter (askPreviousOwner);
//   - a node whose owner peer is ejected or fails fetches the key from the
//     next live node on the ring, which loads it once for every node
//     (fallback), instead of loading it itself (but for a while after a
//     write of the key reached it: nextNode);
//   - an ejected peer is probed in the background, from memory only, so
//     that a peer that answers again is readmitted within about EjectFor.
//
// Each stays one hop: an OpPeek never loads or forwards, and the next node
// is asked with an ordinary OpGet, which it answers itself (ServePeer).

// fallbackPicker is a PeerPicker that can name a key's next live node and
// previous owner (picker.Peers, and the transports' peer sets built on
// it).
type fallbackPicker interface {
	PickFallback(key string, skip func(Peer) bool) (next, previous Peer, changed time.Time)
}

// held answers an OpPeek of key: the fresh value or cached "not
// found" in memory, else an error wrapping ErrNotHeld. It never
// loads, forwards or serves a stale value. A key that another node owns now
// (it asked for it: it took the key over) moves from this node's main
// cache to its hot cache, as a copy of a remote key: the main cache's room
// goes back to the keys this node owns.
func (g *Group) held(key string) (entry, error) {
	v, exp, ok := g.mem.get(key)
	if !ok || (!g.fresh.isFresh(exp) && !g.mem.second(key, &v, &exp, g.fresh.nanos())) {
		if ok {
			g.mem.unhit(key)
		}
		g.counters.notHeld.Add(1) // after the unhit: see Stats
		return entry{}, &Error{Group: g.name, Key: key, Err: ErrNotHeld}
	}
	if g.peers != nil {
		if _, remote := g.pickPeer(key); remote {
			g.mem.demote(key, g.fresh.nanos())
		}
	}
	e, err := g.fresh.cached(v, exp)
	if err != nil {
		err = &Error{Group: g.name, Key: key, Err: err}
	}
	return e, err
}

// askPreviousOwner asks the previous owner of key, if the ring changed within its
// window and that peer is not ejected, for the key from memory, within
// PeerPolicy.HandoffTimeout. ok reports whether it answered (a value, or a
// "not found" it had cached); the answer is kept in main, as this node
// owns the key now. Anything else (it does not hold the key, it is gone,
// it is slow) leaves the load to the caller.
func (g *Group) askPreviousOwner(ctx context.Context, key string, gen uint64) (e entry, err error, ok bool) {
	if g.router == nil || g.hotBlocked() || g.mem.wroteWithin(key, g.writeReach()) {
		// hotBlocked: a Purge is still reaching the peers, so the previous
		// owner may hold a value from before it; load instead. So may it
		// after a recent write of the key (memory.wrote).
		return entry{}, nil, false
	}
	_, prev, changed := g.router.PickFallback(key, nil)
	if prev == nil || g.health.isEjected(prev) {
		return entry{}, nil, false
	}
	ph := g.health.of(prev)
	if ph != nil && !ph.handoff.wanted(changed) {
		return entry{}, nil, false
	}
	hctx, cancel := context.WithTimeout(ctx, g.policy.HandoffTimeout)
	sctx, span := g.step(hctx, spanPeer, key, prev)
	v, ttl, err := peerGet(sctx, prev, OpPeek, g.name, key)
	span.End(err)
	cancel()
	ttl, keep := g.peerTTL(ttl, err)
	if !found(err) || !keep {
		g.counters.handoffMisses.Add(1)
		if ph != nil {
			ph.handoff.missed()
		}
		return entry{}, nil, false
	}
	g.counters.handoffs.Add(1)
	if ph != nil {
		ph.handoff.hit()
	}
	e, err = g.keep(g.mem.main, key, v, ttl, err, gen)
	g.creditMoved(key)
	return e, err, true
}

// writeReach is how long a write of a key may take to reach every node
// after it reached its owner: the owner's answer, then each other node's,
// each within SlowAfter.
func (g *Group) writeReach() time.Duration { return 2 * g.policy.SlowAfter }

// takenOverCredit is the uses a key this node loads as the next node for
// an owner that is down (or for a peer whose ring disagrees) is credited
// with in the main cache's frequency sketch. The W-TinyLFU policy admits
// a new entry only if it looks used more often than the entry it would
// evict; a key whose uses were all counted on another node would lose
// that contest at once and be loaded again at its next request (measured:
// docs/performance.md, "Membership changes"). maxUses (3) is what one visit
// of the policy can count of a key used often.
const takenOverCredit = 3

// creditMoved counts the one use that a key moved to this node by a
// ring change (offered by its previous owner, or fetched from it on
// demand) enters main with, once kept. A node that takes thousands of keys
// at once (one that joins, or returns) and then makes room without a duel,
// as it does while its hot cache grows to its share, gives its policy's
// hand victims: not yet asked here, each key it took was one as soon as the
// hand reached it, ahead of the keys the node loaded itself and used once.
// With a use, the hand passes each once, so that a key is judged on its
// uses here. (Which of them the hand meets first: policy.overflow.)
//
// The use reaches the frequency sketch when the hand passes the key, or
// when it duels from the window, so a key taken over wins a duel only
// against keys used less than twice. An offer names every key the sender
// held, cold ones too, and a larger credit (as takenOverCredit) would let
// each push out the receiver's keys used twice, which then load again
// (BenchmarkRollSim). A key loaded for a dead owner is credited three:
// nobody else holds it (BenchmarkChurnSim).
func (g *Group) creditMoved(key string) { g.mem.main.Use(key) }

// creditTakenOver credits key as taken over (see takenOverCredit) if
// another node owns it by this node's ring: this node loaded it for a
// peer whose owner is down, or whose ring disagrees. If picked, the
// load's caller asked the ring already, and remote is its answer;
// else the ring is asked here.
func (g *Group) creditTakenOver(key string, picked, remote bool) {
	if g.router == nil {
		return
	}
	if !picked {
		_, remote = g.pickPeer(key)
	}
	if remote {
		g.mem.main.Credit(key, takenOverCredit)
	}
}

// keepFallback keeps the copy of key a hedge kept in hot, once the owner
// failed (the hedge's load stood in for the fallback's), where the
// fallback would have kept its load: in main, credited as taken over, if
// this node is the key's next live node, or was asked as it (next is
// false: no further step), as it loads the key for the other nodes while
// the owner is down; in main without a router, as every node loads a
// failed owner's keys then. Else it stays in hot: the next node holds the
// key for the cluster.
func (g *Group) keepFallback(key string, next bool) {
	if next && g.router != nil {
		if peer, _, _ := g.router.PickFallback(key, g.health.isEjected); peer != nil {
			return
		}
	}
	if g.mem.promote(key, g.fresh.nanos()) && g.router != nil {
		g.mem.main.Credit(key, takenOverCredit)
	}
}

// fallback loads key after its owner could not be asked: from the next
// live node on the ring when next is set and there is one, else locally
// (counted in local, if not nil). The next node is asked without a
// further fallback, so a key takes at most one such step; its hedge
// publishes through flight, as loadFromPeer's.
func (g *Group) fallback(ctx context.Context, key string, next bool, local *atomic.Int64, gen uint64, flight singleflight.Flight[entry, loadArg]) (entry, error) {
	if next && g.router != nil {
		if peer := g.nextNode(key); peer != nil {
			g.counters.nextPeer.Add(1)
			return g.loadFromPeer(ctx, peer, key, false, gen, flight)
		}
	}
	if local != nil {
		local.Add(1)
	}
	if g.router != nil {
		// This node is the key's next owner: it loads it in the flight
		// that answers the other nodes' requests for it (an OpGet), so
		// that the key loads once here, whoever asks.
		return g.localFlight.DoLoader(ctx, key, (*localLoader)(g), loadArg{picked: true, remote: true}) // its owner is a peer
	}
	return g.loadLocally(ctx, spanFallback, key, false, gen)
}

// nextNode returns the next live node to fetch key from in place of its
// failed owner, or nil to load key here: also within writeReach of a write
// of key here. A write tells the nodes other than the owner together, so
// the next node may not have been told yet, and its memory may still hold
// the value the write replaced; a fetch from it that began after the write
// reached this node would hand that value to every Get that joins it.
func (g *Group) nextNode(key string) Peer {
	if g.mem.wroteWithin(key, g.writeReach()) {
		return nil
	}
	peer, _, _ := g.router.PickFallback(key, g.health.isEjected)
	return peer
}

// A previous owner that has answered "not held" coldHandoffs times since
// the last change of the ring and has answered with no key (a cluster that
// started together: every node's previous ring is cold) is not asked again
// for coldPause, then once, and so on until it answers with a key or the
// ring changes again: a bounded cost where asking cannot help. One that
// has answered with a key is asked for every key it may hold, for the whole
// window: a previous owner that holds part of its keys (those asked while
// it drained) is worth its misses.
const (
	coldHandoffs = 8
	coldPause    = time.Second
)

// wanted reports whether the previous owner p is worth asking now,
// after the ring change at changed.
func (p *handoffWorth) wanted(changed time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !changed.Equal(p.coldRing) {
		p.cold, p.warm, p.coldRing = 0, false, changed
	}
	if p.warm || p.cold < coldHandoffs {
		return true
	}
	now := time.Now()
	if now.Before(p.coldUntil) {
		return false
	}
	p.coldUntil = now.Add(coldPause) // this one is the try
	return true
}

func (p *handoffWorth) missed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cold++; p.cold == coldHandoffs {
		p.coldUntil = time.Now().Add(coldPause)
	}
}

func (p *handoffWorth) hit() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.warm = true
}

// probe asks the ejected peer, in the background and from memory only,
// whether it answers again: at most one such probe per peer at a time, and
// one per EjectFor. A peer that answers (a value, "not found" or "not
// held") is readmitted at once, rather than at the end of an ejection
// that may have doubled several times while it was down; one that does
// not stays ejected as it was. A transport that cannot carry an OpPeek
// (errors.ErrUnsupported) proves nothing of the peer: the peer then waits
// out its ejection. Get and GetMany start it alike.
func (g *Group) probe(peer Peer, ph *peerHealth, key string) {
	if !g.health.startProbe(ph) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), g.policy.HandoffTimeout)
		_, _, err := peerGet(ctx, peer, OpPeek, g.name, key)
		cancel()
		g.health.endProbe(ph, found(err) || errors.Is(err, ErrNotHeld))
	}()
}
