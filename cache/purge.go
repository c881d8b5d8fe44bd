package cache

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync/atomic"
)

// purgeState is what a group remembers of its last Purge: until
// noHotUntil (Unix nanoseconds of the group's clock) it keeps no hot copy,
// since an owner that has not purged yet may still answer with a value
// loaded before the purge.
type purgeState struct {
	noHotUntil atomic.Int64
}

// hotBlocked reports whether a value fetched from a peer may not be kept
// now, because a Purge is still reaching the other nodes.
func (g *Group) hotBlocked() bool {
	u := g.purge.noHotUntil.Load()
	return u != 0 && g.fresh.nanos() < u
}

// Purge drops every value of the group on every node: here and at each
// peer, in one request per peer (two with more than one peer: the second
// once every peer has taken the first), each in time independent of how
// many values it holds (its memory is replaced by an empty one, hot
// copies included, and the old one is garbage at once). A load in flight
// anywhere when the purge reaches it keeps its value from its waiters but
// not in the cache, and no later Get joins it; for PeerPolicy.SlowAfter
// after a purge, a node keeps no copy of a value fetched from a peer (a
// peer the purge has not reached yet could send one loaded before it). So
// a value loaded before the purge never comes back after it, on the nodes
// that confirm. It returns an *UpdateError (with an empty Key) naming the
// peers that did not confirm within their share of ctx's time; those may
// still serve old values until their copies expire or are evicted. Unlike
// Remove's, a Purge is not retried in the background.
func (g *Group) Purge(ctx context.Context) error {
	g.purgeLocal()
	purge := func(ctx context.Context, p Peer) error {
		return peerDo(ctx, p, PeerRequest{Op: OpPurge, Group: g.name}, manyKeys{})
	}
	peers := g.peerList()
	failed := g.tellAll(ctx, peers, purge)
	g.purgeLocal() // a value fetched meanwhile from a peer not yet purged
	if len(peers) > 1 {
		// The same holds at each peer: one the purge reached before
		// another may have fetched from that other meanwhile, and a Get
		// after this Purge could join that fetch. Once all have purged,
		// the ones that confirmed are purged again.
		again := slices.DeleteFunc(slices.Clone(peers), func(p Peer) bool { return failed[p.Addr()] != nil })
		for a, err := range g.tellAll(ctx, again, purge) {
			failed[a] = err
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &UpdateError{Group: g.name, Failed: failed}
}

// purgeLocal empties this node's memory of the group.
func (g *Group) purgeLocal() {
	g.purge.noHotUntil.Store(g.fresh.nanos() + int64(g.policy.SlowAfter))
	g.mem.purge()
	g.forwardFlight.ForgetAll()
	g.localFlight.ForgetAll()
}

// RemoveMany removes keys from the cluster, as Remove removes each, with
// one request per node: the peers that own any of the keys are told
// first, and the others once those have confirmed (or after 100 ms, or
// half of ctx's time), so that none fetches an old value again from an
// owner that still holds it; this node drops them before and after. Each
// peer has its own share of ctx's time, at most PeerPolicy.SlowAfter. It
// returns an *UpdateError (with an empty Key) naming the peers that did
// not confirm; a peer whose transport cannot batch is sent a Remove per
// key. The peers it names are told again in the background, key by key,
// as after a Remove (see UpdateError).
func (g *Group) RemoveMany(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	if g.peers == nil {
		for _, k := range keys {
			g.removeLocal(k)
		}
		return nil
	}
	seqs := make([]uint64, len(keys))
	for i, k := range keys {
		seqs[i] = g.health.writes.begin(k) // supersedes the retries of older writes of k
		g.removeLocal(k)
	}
	var owners []Peer
	for _, k := range keys {
		if o, remote := g.pickPeer(k); remote && !hasPeer(owners, o) {
			owners = append(owners, o)
		}
	}
	rest := slices.DeleteFunc(slices.Clone(g.peerList()), func(p Peer) bool { return hasPeer(owners, p) })
	// The order is Remove's (write.pass): the others once the owners
	// have confirmed; at once if the owners are late, and again once they
	// confirm. An owner of one key is one of the others for the keys
	// another owner holds: with more than one owner, they are told again
	// too, once all have confirmed, so that none keeps an old value it
	// fetched from another owner meanwhile.
	apply := func(ctx context.Context, p Peer) error { return removeBatch(ctx, g.name, p, keys) }
	var failed map[string]error
	ownersDone := make(chan struct{})
	go func() {
		failed = g.tellAll(ctx, owners, apply)
		close(ownersDone)
	}()
	late := !waitOwner(ctx, ownersDone)
	var restFailed map[string]error
	if late {
		restFailed = g.tellAll(ctx, rest, apply)
		<-ownersDone
	}
	if len(failed) == 0 || !late {
		again := rest
		if len(failed) == 0 && len(owners) > 1 {
			again = append(slices.Clone(rest), owners...)
		}
		restFailed = g.tellAll(ctx, again, apply)
	}
	for a, err := range restFailed {
		failed[a] = err
	}
	for i, k := range keys {
		g.removeLocal(k)
		// The peers that did not confirm are told again in the background,
		// key by key, as after a Remove.
		g.health.writes.end(ctx, g.newWrite(k, nil), seqs[i], failed)
	}
	if len(failed) == 0 {
		return nil
	}
	return &UpdateError{Group: g.name, Failed: failed}
}

// removeBatch drops keys at p in one request, or key by key if p cannot
// batch.
func removeBatch(ctx context.Context, group string, p Peer, keys []string) error {
	err := peerDo(ctx, p, PeerRequest{Op: OpRemove, Group: group, Keys: keys}, manyKeys{})
	if err == nil || !errors.Is(err, errors.ErrUnsupported) || len(keys) == 1 {
		return err
	}
	for _, k := range keys {
		if err := peerRemove(ctx, p, group, k); err != nil {
			return err
		}
	}
	return nil
}

// tellAll applies a change to each peer of list concurrently, each within
// its own share of ctx (at most PeerPolicy.SlowAfter), skipping the ejected
// ones, and returns the failures by address.
func (g *Group) tellAll(ctx context.Context, list []Peer, apply func(context.Context, Peer) error) map[string]error {
	w := &write{g: g, apply: func(ctx context.Context, p Peer, _ bool) error { return apply(ctx, p) }}
	failed := w.pass(ctx, nil, list, nil, true) // no owner: each is told once, at once
	maps.DeleteFunc(failed, func(_ string, err error) bool { return err == nil })
	return failed
}
