package picker

import (
	"sync"
	"time"

	"github.com/geecache/geecache/cache"
)

// This file is what a group asks the ring when the owner of a key cannot
// answer from memory: the next live node after the owner (for an owner that
// is down), and the owner before the last change of the node set (for a key
// that just moved, whose old owner may still hold it).

// keepPrevious records in st, the snapshot that replaces old, the ring
// before the last change of the node set and when it changed. A Set that
// keeps the node set keeps both. The first change that gives a node peers
// (it has just started, and owned everything alone) records as the previous
// ring the new one without the node itself: the nodes that held its keys
// before it joined, built when first asked for (a Set does not pay for it).
// Without Options.Handoff nothing is recorded.
func (p *Peers) keepPrevious(st, old *peerState) {
	if p.cfg.window == 0 {
		return
	}
	if st.ring == old.ring {
		st.prevRing, st.prevGetters, st.join, st.changed = old.prevRing, old.prevGetters, old.join, old.changed
		return
	}
	st.changed = time.Now()
	alone := len(old.ring.nodes) == 0 || (len(old.ring.nodes) == 1 && old.self == 0)
	switch {
	case !alone:
		st.prevRing, st.prevGetters = old.ring, old.getters
	case st.self >= 0 && len(st.ring.nodes) >= 2:
		st.join = &joinRing{}
	}
}

// A joinRing is the ring of a snapshot without self, built once, when
// first asked for.
type joinRing struct {
	once    sync.Once
	ring    *ring
	getters []cache.Peer
}

// previous returns the ring before the last change and its getters, or
// nil.
func (p *Peers) previous(st *peerState) (*ring, []cache.Peer) {
	if st.join == nil {
		return st.prevRing, st.prevGetters
	}
	j := st.join
	j.once.Do(func() {
		others := make([]string, 0, len(st.ring.nodes)-1)
		j.getters = make([]cache.Peer, 0, len(st.ring.nodes)-1)
		for i, n := range st.ring.nodes {
			if i != st.self {
				others = append(others, n)
				j.getters = append(j.getters, st.getters[i])
			}
		}
		j.ring = rebuild(st.ring, p.cfg, others)
	})
	return j.ring, j.getters
}

// PickFallback names the peers a group asks for key beyond its owner.
//
// next is the first node after the owner on the ring (clockwise from the
// key) that is neither the owner nor a peer for which skip reports true
// (the group passes the peers it has ejected; skip may be nil): the node
// that takes the keys of an owner that is down, so that they are loaded
// once, there, rather than by every node. next is nil when that node is
// this one (self), or when there is none: the caller loads the key itself.
//
// previous is the owner of key before the last change of the node set,
// with Options.Handoff, when that change is at most Options.HandoffWindow
// old and that node is neither self nor the owner now: the node that may
// still hold the key in memory. After a node's first Set with other nodes (it has just joined),
// the previous owner of a key is its owner on the ring without this node.
// changed is when the node set last changed (zero if it never did), so
// that a caller can tell one change from the next.
//
// PickFallback does not allocate unless skip rejects a peer (and once
// after a node's first Set, when it builds the ring without self). Transports
// need not call it: a group does (see cache.PeerPolicy).
func (p *Peers) PickFallback(key string, skip func(cache.Peer) bool) (next, previous cache.Peer, changed time.Time) {
	st := p.state.Load()
	i := st.ring.lookup(key)
	if i < 0 {
		return nil, nil, st.changed
	}
	o := int(st.ring.owners[i])
	next = st.after(i, o, skip)
	if !st.changed.IsZero() && time.Since(st.changed) < p.cfg.window {
		if pr, getters := p.previous(st); pr != nil {
			if j := pr.lookup(key); j >= 0 {
				po := pr.owners[j]
				if name := pr.nodes[po]; name != p.self && name != st.ring.nodes[o] {
					previous = getters[po]
				}
			}
		}
	}
	return next, previous, st.changed
}

// after walks the ring clockwise from point i, whose owner is node o, to
// the first point of another node that has a getter and is not skipped,
// and returns that getter; nil if the first such node is self, or if
// there is none.
func (s *peerState) after(i, o int, skip func(cache.Peer) bool) cache.Peer {
	n := len(s.ring.points)
	var rejected []bool // by node, once skip has said no to one
	left := len(s.ring.nodes) - 1
	for k := 1; k < n && left > 0; k++ {
		c := int(s.ring.owners[(i+k)%n])
		switch {
		case c == o:
			continue
		case c == s.self:
			return nil
		case rejected != nil && rejected[c]:
			continue
		}
		g := s.getters[c]
		if g != nil && (skip == nil || !skip(g)) {
			return g
		}
		if rejected == nil {
			rejected = make([]bool, len(s.ring.nodes))
		}
		rejected[c] = true
		left--
	}
	return nil
}
