package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
)

// A PeerUpdater is a PeerGetter that can also change a key on its peer, so
// that Group.Remove and Group.Set reach every node. The transports of
// GeeCache implement it.
type PeerUpdater interface {
	// Remove drops key of group from the peer's memory.
	Remove(ctx context.Context, group, key string) error
	// Set stores value under key of group at the peer, which owns it, for
	// ttl (0: the group's default).
	Set(ctx context.Context, group, key string, value []byte, ttl time.Duration) error
}

// A PeerLister is a PeerPicker that can list the getters of all peers other
// than this node, so that a removal can reach the hot caches of every node.
// picker.Peers and the transports' pools implement it.
type PeerLister interface {
	PeerGetters() []PeerGetter
}

// ErrPartialUpdate is wrapped by the *UpdateError that Remove and Set return
// when some peers could not be reached.
var ErrPartialUpdate = errors.New("some peers were not updated")

// An UpdateError lists the peers a Remove or Set did not reach. Delivery is
// best effort: a peer that was not reached may serve its copy of the old
// value until it expires or is evicted.
type UpdateError struct {
	Group, Key string
	Failed     map[string]error // by peer address
}

// Error names the group, the key and the peers not reached.
func (e *UpdateError) Error() string {
	addrs := make([]string, 0, len(e.Failed))
	for a := range e.Failed {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	var b strings.Builder
	fmt.Fprintf(&b, "geecache: group %q, key %q: %v:", e.Group, e.Key, ErrPartialUpdate)
	for _, a := range addrs {
		fmt.Fprintf(&b, " %s (%v);", a, e.Failed[a])
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Unwrap returns ErrPartialUpdate.
func (e *UpdateError) Unwrap() error { return ErrPartialUpdate }

// Remove removes key from the cluster: from its owner first, then from this
// node and from the hot caches of every other peer, so that the next Get
// anywhere loads it anew. A load of key in flight anywhere it is removed
// keeps its value from its waiters but not in the cache. It returns an
// *UpdateError naming the peers it could not reach (their copies last
// until they expire or are evicted).
func (g *Group) Remove(ctx context.Context, key string) error {
	return g.update(ctx, key, func(ctx context.Context, p PeerUpdater, owner bool) error {
		return p.Remove(ctx, g.name, key)
	}, nil)
}

// Set stores value as key's value in the cluster: at the owner (here, or
// the owner peer), for ttl (0: the group's default TTL), and drops the
// copies other nodes hold, so that they fetch the new value from the
// owner. Like Remove, it is best effort and reports the peers not reached.
func (g *Group) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl < 0 {
		return &Error{Group: g.name, Key: key, Err: fmt.Errorf("negative TTL %v", ttl)}
	}
	return g.update(ctx, key, func(ctx context.Context, p PeerUpdater, owner bool) error {
		if owner {
			return p.Set(ctx, g.name, key, value, ttl)
		}
		return p.Remove(ctx, g.name, key)
	}, func() { g.SetLocal(key, value, ttl) })
}

// RemoveLocal drops key from this node's memory only, and keeps any load of
// it in flight here from caching its value. Transports call it for a
// peer's Remove; use Remove to remove a key from the cluster.
func (g *Group) RemoveLocal(key string) {
	g.mem.remove(key)
	g.forwardFlight.Forget(key)
	g.localFlight.Forget(key)
}

// SetLocal stores value under key in this node's main cache, for ttl (0:
// the group's default), replacing any value and keeping any load in flight
// from overwriting it. Transports call it for a peer's Set at the owner;
// use Set to set a key in the cluster.
func (g *Group) SetLocal(key string, value []byte, ttl time.Duration) {
	if ttl <= 0 {
		ttl = g.fresh.ttl
	}
	exp, now := g.fresh.expiry(ttl)
	g.mem.replace(key, bytes.Clone(value), exp, now)
	g.forwardFlight.Forget(key)
	g.localFlight.Forget(key)
}

// samePeer reports whether a and b are the same peer; peers whose type
// cannot be compared are never the same.
func samePeer(a, b PeerGetter) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// update applies a change to key: first at the owner (local, if this node
// owns it or nothing else does, else the owner peer through apply), then
// here and at every other peer at once (through apply with owner false).
func (g *Group) update(ctx context.Context, key string, apply func(context.Context, PeerUpdater, bool) error, local func()) error {
	var owner PeerGetter
	remote := false
	if g.peers != nil {
		owner, remote = g.peers.PickPeer(key)
	}
	failed := map[string]error{}
	if remote {
		u, ok := owner.(PeerUpdater)
		err := errors.New("the peer's transport cannot update keys")
		if ok {
			err = apply(ctx, u, true)
		}
		if err != nil {
			failed[peerAddr(owner)] = err
		}
		g.RemoveLocal(key)
	} else if local != nil {
		local()
	} else {
		g.RemoveLocal(key)
	}
	var others []PeerGetter
	if l, ok := g.peers.(PeerLister); ok {
		others = l.PeerGetters()
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range others {
		if remote && samePeer(p, owner) {
			continue
		}
		wg.Go(func() {
			u, ok := p.(PeerUpdater)
			err := errors.New("the peer's transport cannot update keys")
			if ok {
				err = apply(ctx, u, false)
			}
			if err != nil {
				mu.Lock()
				failed[peerAddr(p)] = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		return &UpdateError{Group: g.name, Key: key, Failed: failed}
	}
	return nil
}
