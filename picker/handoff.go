package picker

import (
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
// before it joined.
func (p *Peers) keepPrevious(st, old *peerState) {
	if st.ring == old.ring {
		st.prev, st.changed = old.prev, old.changed
		return
	}
	st.changed = time.Now()
	alone := len(old.ring.nodes) == 0 || (len(old.ring.nodes) == 1 && old.self == 0)
	if !alone {
		o := *old
		o.prev = nil // one ring back, never a chain
		st.prev = &o
		return
	}
	if st.self < 0 || len(st.ring.nodes) < 2 {
		return
	}
	others := make([]string, 0, len(st.ring.nodes)-1)
	getters := make([]cache.PeerGetter, 0, len(st.ring.nodes)-1)
	for i, n := range st.ring.nodes {
		if i != st.self {
			others = append(others, n)
			getters = append(getters, st.getters[i])
		}
	}
	st.prev = &peerState{ring: rebuild(st.ring, p.cfg, others), getters: getters, self: -1}
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
// PickFallback does not allocate unless skip rejects a peer. Transports
// need not call it: a group does (see cache.PeerPolicy).
func (p *Peers) PickFallback(key string, skip func(cache.PeerGetter) bool) (next, previous cache.PeerGetter, changed time.Time) {
	st := p.state.Load()
	i := st.ring.lookup(key)
	if i < 0 {
		return nil, nil, st.changed
	}
	o := int(st.ring.owners[i])
	next = st.after(i, o, skip)
	if pr := st.prev; pr != nil && time.Since(st.changed) < p.cfg.window {
		if j := pr.ring.lookup(key); j >= 0 {
			po := pr.ring.owners[j]
			if name := pr.ring.nodes[po]; name != p.self && name != st.ring.nodes[o] {
				previous = pr.getters[po]
			}
		}
	}
	return next, previous, st.changed
}

// after walks the ring clockwise from point i, whose owner is node o, to
// the first point of another node that has a getter and is not skipped,
// and returns that getter; nil if the first such node is self, or if
// there is none.
func (s *peerState) after(i, o int, skip func(cache.PeerGetter) bool) cache.PeerGetter {
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
