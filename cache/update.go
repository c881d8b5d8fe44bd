package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// A PeerLister is a PeerPicker that can list the getters of all peers other
// than this node, so that a removal can reach the hot caches of every node.
// picker.Peers and the transports' pools implement it.
type PeerLister interface {
	ListPeers() []Peer
}

// ErrPartialUpdate is wrapped by the *UpdateError that Remove and Set return
// when some nodes did not confirm the change in time.
var ErrPartialUpdate = errors.New("some peers did not confirm the change")

// An UpdateError names the peers that did not confirm a Remove or Set in
// time (Failed, by address, with why). "Not confirmed" is not "not done": a
// peer that was slow or stopped may still apply the change (a stopped
// process applies the requests queued to it when it resumes). What a
// caller may assume when Remove or Set returns one:
//   - The owner, if not named, holds the new value (Set) or none (Remove).
//   - Another node not named (this one included) has dropped its copy;
//     with the owner not named either, it holds no copy older than the
//     change.
//   - A named node may still serve the old value, until the change
//     reaches it, its copy expires or is evicted.
//   - While the owner is named, the other nodes may fetch the old value
//     from it again.
//
// The group keeps telling the named peers in the background, for up to
// 1,024 keys at a time and a bounded time (6 attempts at most, over about
// half a minute, with backoff), to drop the key: a Remove, for a Set too,
// since a retry that carried a value could land over a newer Set from
// this node or another (the next Get loads the key from the source). Once
// the owner confirms, it tells the other nodes again. A later Remove or
// Set of the key on this node supersedes those retries. A peer whose
// transport cannot change keys (its Remove or Set returns an error wrapping
// errors.ErrUnsupported) is named and not retried.
//
// A RemoveMany or a Purge reports one for the group, with Key empty.
type UpdateError struct {
	Group, Key string
	Failed     map[string]error // by peer address
}

// Error names the group, the key and the peers that did not confirm.
func (e *UpdateError) Error() string {
	var b strings.Builder
	if e.Key == "" { // a RemoveMany or a Purge
		fmt.Fprintf(&b, "geecache: group %q: %v:", e.Group, ErrPartialUpdate)
	} else {
		fmt.Fprintf(&b, "geecache: group %q, key %q: %v:", e.Group, e.Key, ErrPartialUpdate)
	}
	for _, a := range slices.Sorted(maps.Keys(e.Failed)) {
		fmt.Fprintf(&b, " %s (%s);", a, unprefixed(e.Failed[a]))
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Unwrap returns ErrPartialUpdate.
func (e *UpdateError) Unwrap() error { return ErrPartialUpdate }

// Remove removes key from the cluster: at its owner, here, and in the hot
// caches of every other peer, so that the next Get anywhere loads it anew.
// The owner is told first, the others once it has confirmed, so that none
// fetches the old value from it again; an owner that has not answered
// within 100 ms (or half of ctx's time) no longer holds them up: they are
// told at once, and again once the owner confirms. Each peer has its own
// share of ctx's time, at most PeerPolicy.SlowAfter, so that one hung peer
// does not use up the others', and a peer this node has ejected is not
// waited for (it is named at once, and retried). A load of key in flight anywhere it is removed keeps its
// value from its waiters but not in the cache. Removing a key no node
// holds is not an error. It returns an *UpdateError naming the peers that
// did not confirm; see UpdateError for what each node may still serve.
func (g *Group) Remove(ctx context.Context, key string) error {
	return g.update(ctx, key, func(ctx context.Context, p Peer, owner bool) error {
		return peerRemove(ctx, p, g.name, key)
	}, nil)
}

// Set stores value as key's value in the cluster: at the owner (here, or
// the owner peer), for ttl (0: the group's default TTL), and drops the
// copies other nodes hold, so that they fetch the new value from the
// owner. Like Remove, it gives each peer its own share of ctx's time and
// returns an *UpdateError naming the peers that did not confirm.
func (g *Group) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl < 0 {
		return &Error{Group: g.name, Key: key, Err: fmt.Errorf("negative TTL %v", ttl)}
	}
	return g.update(ctx, key, func(ctx context.Context, p Peer, owner bool) error {
		if owner {
			return peerDo(ctx, p, PeerRequest{Op: OpSet, Group: g.name, Keys: []string{key}, Value: value, TTL: ttl}, manyKeys{})
		}
		return peerRemove(ctx, p, g.name, key)
	}, func() { g.setLocal(key, value, ttl) })
}

// removeLocal drops key from this node's memory only, and keeps any load of
// it in flight here from caching its value (a peer's OpRemove).
func (g *Group) removeLocal(key string) {
	g.mem.remove(key)
	g.forwardFlight.Forget(key)
	g.localFlight.Forget(key)
}

// setLocal stores value under key in this node's main cache, for ttl (0:
// the group's default), replacing any value and keeping any load in flight
// from overwriting it (Set here, or a peer's OpSet at the owner).
func (g *Group) setLocal(key string, value []byte, ttl time.Duration) {
	if ttl <= 0 {
		ttl = g.fresh.ttl
	}
	exp, now := g.fresh.expiry(ttl)
	g.fresh.expiring(exp)
	g.mem.replace(key, bytes.Clone(value), exp, now)
	g.forwardFlight.Forget(key)
	g.localFlight.Forget(key)
}

// samePeer reports whether a and b are the same peer; peers whose type
// cannot be compared are never the same.
func samePeer(a, b Peer) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// hasPeer reports whether list holds p (samePeer).
func hasPeer(list []Peer, p Peer) bool {
	return slices.ContainsFunc(list, func(q Peer) bool { return samePeer(q, p) })
}

// newWrite returns a write of key through apply, to the owner peer if
// another node owns key.
func (g *Group) newWrite(key string, apply func(context.Context, Peer, bool) error) *write {
	w := &write{g: g, key: key, apply: apply}
	if g.peers != nil {
		if o, remote := g.pickPeer(key); remote {
			w.owner = o
		}
	}
	return w
}

// update applies a change to key: at the owner (local, if this node owns
// it or nothing else does, else the owner peer through apply), here, and at
// every other peer (through apply with owner false), as write.pass orders
// it. The peers that do not confirm are retried in the background (see
// retries.end) and reported.
func (g *Group) update(ctx context.Context, key string, apply func(context.Context, Peer, bool) error, local func()) error {
	w := g.newWrite(key, apply)
	seq := g.health.writes.begin(key) // supersedes the retries of an older write of key
	if w.owner != nil || local == nil {
		g.removeLocal(key)
	} else {
		local()
	}
	others := slices.DeleteFunc(slices.Clone(g.peerList()), func(p Peer) bool { return samePeer(p, w.owner) })
	failed := w.pass(ctx, w.owner, others, nil, true)
	maps.DeleteFunc(failed, func(_ string, err error) bool { return err == nil })
	g.health.writes.end(ctx, w, seq, failed)
	if len(failed) == 0 {
		return nil
	}
	return &UpdateError{Group: g.name, Key: key, Failed: failed}
}

// peerList returns the peers other than this node, if the picker can list
// them.
func (g *Group) peerList() []Peer {
	if l, ok := g.peers.(PeerLister); ok {
		return l.ListPeers()
	}
	return nil
}
