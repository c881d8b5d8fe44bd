package picker

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/cache"
)

// Peers is a [cache.PeerPicker] over a consistent-hash ring, for any
// transport. It knows this node's own address (self) and turns every other
// address into a [cache.Peer] with a constructor that the transport
// supplies.
//
// Self is always part of the ring, whether or not it is in the list given
// to [Peers.Set]; listing it is recommended (as with the original
// GeeCache's HTTPPool), so that every node is configured with the same
// list. Every node of a cluster must see the same set of addresses
// (including its own), the same hash and the same replica count, or they
// disagree on owners. An empty self makes a pure client: it owns no keys.
//
// A Peers is safe for concurrent use: [Peers.Set] replaces an immutable
// snapshot atomically, and lookups never block and never allocate.
type Peers struct {
	self      string
	newGetter func(addr string) cache.Peer
	cfg       config
	normalize func(addr string) (string, error) // Options.Normalize, or nil
	onChange  func()                            // Options.OnChange, or nil (not in cfg: every ring copies cfg)
	log       *slog.Logger

	mu    sync.Mutex // serialises Set
	state atomic.Pointer[peerState]
}

// peerState is an immutable snapshot: a ring and one getter per ring node,
// and the snapshot it replaced (see handoff.go).
type peerState struct {
	ring    *ring
	getters []cache.Peer // parallel to ring.nodes; nil for self
	self    int          // index of self in ring.nodes, or -1

	// The ring before the last change of the node set (see handoff.go):
	// its ring and getters, or with join a ring built on first use.
	prevRing    *ring
	prevGetters []cache.Peer
	join        *joinRing
	changed     time.Time // when the node set last changed (zero: never)
}

// NewPeers returns a peer set for the node at address self. newGetter is
// called once for each other address when it first appears in [Peers.Set];
// the getter is reused for as long as the address stays. If newGetter is
// nil or returns nil for an address, keys owned by that address are
// loaded locally (PickPeer reports ok == false for them), though the
// address still owns its share of the ring. Until Set is called, the ring
// holds only self. A non-empty self is normalised (Options.Normalize).
// opts may be nil for the defaults; NewPeers fails, with an error wrapping
// [cache.ErrConfig] (or Normalize's error), for a self or options that
// cannot work.
func NewPeers(self string, newGetter func(addr string) cache.Peer, opts *Options) (*Peers, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	p := &Peers{newGetter: newGetter, cfg: c, log: slog.Default()}
	if opts != nil {
		p.normalize = opts.Normalize
		p.onChange = opts.OnChange
		if opts.Logger != nil {
			p.log = opts.Logger
		}
	}
	if self != "" && p.normalize != nil {
		if self, err = p.normalize(self); err != nil {
			return nil, err
		}
	}
	p.self = self
	p.state.Store(p.snapshot(nil, nil))
	return p, nil
}

// Set replaces the peer list. Each address is normalised first
// (Options.Normalize); if one is invalid, Set returns the error and keeps
// the old list. Self is added if it is missing; duplicate and empty
// addresses are ignored, and the order does not matter. Getters of
// addresses that stay are reused; getters of removed addresses are dropped
// without being closed (lookups in flight may still use them). Keys move
// only between the nodes that were added or removed. Set logs the new
// list at Debug (Options.Logger) and is safe to call while other goroutines
// call PickPeer.
func (p *Peers) Set(addrs ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.normalize != nil {
		norm := make([]string, 0, len(addrs))
		for _, a := range addrs {
			if a == "" {
				continue
			}
			n, err := p.normalize(a)
			if err != nil {
				return err
			}
			norm = append(norm, n)
		}
		addrs = norm
	}
	old := p.state.Load()
	st := p.snapshot(old, addrs)
	p.keepPrevious(st, old)
	p.state.Store(st)
	if p.onChange != nil && st.ring != old.ring {
		p.onChange()
	}
	if ctx := context.Background(); p.log.Enabled(ctx, slog.LevelDebug) {
		p.log.LogAttrs(ctx, slog.LevelDebug, "geecache: peers set",
			slog.String("self", p.self), slog.Any("peers", st.ring.nodes))
	}
	return nil
}

func (p *Peers) snapshot(old *peerState, addrs []string) *peerState {
	all := make([]string, 0, len(addrs)+1)
	all = append(all, addrs...)
	all = append(all, p.self)
	var prev *ring
	if old != nil {
		prev = old.ring
	}
	r := rebuild(prev, p.cfg, all)

	st := &peerState{ring: r, getters: make([]cache.Peer, len(r.nodes)), self: -1}
	for i, addr := range r.nodes {
		if addr == p.self {
			st.self = i
			continue
		}
		if old != nil {
			if j, found := slices.BinarySearch(old.ring.nodes, addr); found {
				st.getters[i] = old.getters[j]
				continue
			}
		}
		if p.newGetter != nil {
			st.getters[i] = p.newGetter(addr)
		}
	}
	return st
}

// PickPeer returns the getter of the peer that owns key. ok is false when
// self owns the key, when the set is empty (self is "" and no peers were
// set) or when the owner has no getter; the caller then loads the key
// itself. PickPeer does not allocate.
func (p *Peers) PickPeer(key string) (peer cache.Peer, ok bool) {
	st := p.state.Load()
	i := st.ring.lookup(key)
	if i < 0 {
		return nil, false
	}
	o := int(st.ring.owners[i])
	if o == st.self || st.getters[o] == nil {
		return nil, false
	}
	return st.getters[o], true
}

// ListPeers returns the getters of every peer on the ring except self
// (and addresses without a getter), in address order. It implements
// cache.PeerLister, so that a group's Remove and Set reach every peer.
func (p *Peers) ListPeers() []cache.Peer {
	st := p.state.Load()
	out := make([]cache.Peer, 0, len(st.getters))
	for i, g := range st.getters {
		if i != st.self && g != nil {
			out = append(out, g)
		}
	}
	return out
}

// Owner returns the address that owns key (self included), or "" when
// the set is empty: for diagnostics, for routing a request to the node
// that owns its key, or to use a Peers as a plain ring. It does not
// allocate.
func (p *Peers) Owner(key string) string {
	return p.state.Load().ring.owner(key)
}

// Addrs returns the current addresses on the ring, self included, sorted.
func (p *Peers) Addrs() []string { return slices.Clone(p.state.Load().ring.nodes) }

// Self returns this node's own address, normalised; "" for a node that
// owns no keys.
func (p *Peers) Self() string { return p.self }

var (
	_ cache.PeerPicker = (*Peers)(nil)
	_ cache.PeerLister = (*Peers)(nil)
)
