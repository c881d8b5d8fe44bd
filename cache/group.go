package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/geecache/geecache/cache/internal/singleflight"
	"github.com/geecache/geecache/getter"
)

// ErrGetterPanic is wrapped by the error every waiter gets when the load of
// a key panicked (in the Getter or a PeerGetter). The panic is recovered and
// logged with its stack, and the next Get of the key loads it anew.
var ErrGetterPanic = singleflight.ErrPanic

// A Group is a cache namespace: a Getter that loads values, the memory
// that keeps them, and the peers among which its keys are spread. Groups
// are created with Registry.NewGroup and are safe for concurrent use.
type Group struct {
	name   string
	getter getter.Getter
	peers  PeerPicker
	log    *slog.Logger
	mem    *memory

	// Loads that ask the owner peer, and loads from this node's Getter.
	// Kept apart so that a request from a peer, which must not be
	// forwarded, never joins a load that forwards it.
	forwardFlight singleflight.Group[[]byte]
	localFlight   singleflight.Group[[]byte]

	counters counters
}

// Name returns the group's name.
func (g *Group) Name() string { return g.name }

// Get returns the value of key: from this node's memory if it is there,
// else from the peer that owns the key, else (when this node owns it, or
// the owner cannot answer) from the group's Getter. Concurrent Gets of one
// key share one load. A key that does not exist yields an error wrapping
// getter.ErrNotFound. Get returns ctx's error as soon as ctx ends; the
// load goes on for the other callers waiting for it.
func (g *Group) Get(ctx context.Context, key string) (ByteView, error) {
	if v, _, ok := g.mem.get(key); ok {
		return ByteView{v}, nil
	}
	return g.load(ctx, key, true)
}

// GetLocal is Get for a request that comes from a peer: it answers from
// memory or this node's Getter and never forwards to another peer, even if
// this node's peer list names another owner. Transports call it so that a
// request makes at most one hop and nodes with different peer lists cannot
// send a request around in a loop.
func (g *Group) GetLocal(ctx context.Context, key string) (ByteView, error) {
	g.counters.peerRequests.Add(1)
	if v, _, ok := g.mem.get(key); ok {
		return ByteView{v}, nil
	}
	return g.load(ctx, key, false)
}

// Remove drops key from this node's memory. Other nodes may still hold it
// in their hot caches; the next Get here loads it again.
func (g *Group) Remove(key string) { g.mem.remove(key) }

func (g *Group) load(ctx context.Context, key string, mayForward bool) (ByteView, error) {
	g.counters.misses.Add(1)
	var owner PeerGetter
	remote := false
	if g.peers != nil {
		owner, remote = g.peers.PickPeer(key)
	}
	remote = remote && mayForward
	flight := &g.localFlight
	if remote {
		flight = &g.forwardFlight
	}
	v, err := flight.Do(ctx, key, func(ctx context.Context) ([]byte, error) {
		// A load that finished just before this one started has left
		// the value in memory.
		if v, _, ok := g.mem.peek(key); ok {
			return v, nil
		}
		if remote {
			return g.loadFromPeer(ctx, owner, key)
		}
		return g.loadLocally(ctx, key)
	})
	if err != nil {
		var pe *singleflight.PanicError
		if errors.As(err, &pe) {
			g.log.Error("geecache: load panicked", "group", g.name, "key", key, "panic", pe.Value, "stack", string(pe.Stack))
		}
		return ByteView{}, fmt.Errorf("geecache: group %q, key %q: %w", g.name, key, err)
	}
	return ByteView{v}, nil
}

// loadFromPeer fetches key from its owner and keeps it in the hot cache.
// If the owner fails for a reason other than "not found", and the callers
// are still waiting, the node loads the key itself.
func (g *Group) loadFromPeer(ctx context.Context, owner PeerGetter, key string) ([]byte, error) {
	v, err := owner.Get(ctx, g.name, key)
	if err == nil {
		g.counters.peerLoads.Add(1)
		g.mem.add(g.mem.hot, key, v, 0, 0)
		return v, nil
	}
	if errors.Is(err, getter.ErrNotFound) {
		g.counters.peerLoads.Add(1)
		return nil, err
	}
	g.counters.peerErrors.Add(1)
	if ctx.Err() != nil {
		// Every caller has gone: no one wants a fallback load.
		g.counters.abandoned.Add(1)
		return nil, err
	}
	g.counters.fallbacks.Add(1)
	g.log.Warn("geecache: peer failed, loading locally", "group", g.name, "key", key, "err", err)
	return g.loadLocally(ctx, key)
}

// loadLocally calls the Getter and keeps the value in the main cache.
func (g *Group) loadLocally(ctx context.Context, key string) ([]byte, error) {
	g.counters.localLoads.Add(1)
	v, err := g.getter.Get(ctx, key)
	if err != nil {
		if !errors.Is(err, getter.ErrNotFound) {
			g.counters.loadErrors.Add(1)
		}
		return nil, err
	}
	// The Getter may reuse its slice; the cache keeps its own copy.
	v = bytes.Clone(v)
	g.mem.add(g.mem.main, key, v, 0, 0)
	return v, nil
}

// InFlight returns the number of loads this group is running now. Tests
// use it to wait until abandoned loads have finished.
func (g *Group) InFlight() int { return g.forwardFlight.InFlight() + g.localFlight.InFlight() }
