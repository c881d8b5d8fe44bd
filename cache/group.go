package cache

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"

	"github.com/geecache/geecache/cache/internal/singleflight"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/ratelog"
)

// ErrGetterPanic is wrapped by the error every waiter gets when the load of
// a key panicked (in the Getter or a PeerGetter). The panic is recovered and
// logged with its stack, and the next Get of the key loads it anew.
var ErrGetterPanic = singleflight.ErrPanic

// A PanicError is what a load that panicked returns to every caller waiting
// for it, inside an *Error: errors.As(err, &pe) with a *PanicError pe gives
// the panic's value and the stack of the goroutine that panicked.
// errors.Is(err, ErrGetterPanic) is true for it.
type PanicError = singleflight.PanicError

// An Error is the error Get and GetLocal return: the group and key, and the
// cause (the Getter's error, a peer's answer, ctx's error, or a
// *PanicError). Use errors.Is on it for the sentinels (getter.ErrNotFound,
// ErrGetterPanic, context.Canceled) and errors.As for the details.
type Error struct {
	Group string
	Key   string
	Err   error
}

// Error returns "geecache: group G, key K: " and the cause.
func (e *Error) Error() string {
	return "geecache: group " + strconv.Quote(e.Group) + ", key " + strconv.Quote(e.Key) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// A Group is a cache namespace: a Getter that loads values, the memory
// that keeps them, and the peers among which its keys are spread. Groups
// are created with Registry.NewGroup and are safe for concurrent use.
type Group struct {
	name   string
	getter getter.Getter
	peers  PeerPicker
	log    *slog.Logger
	tracer Tracer
	mem    *memory
	warn   *ratelog.Limiter // the group's warnings, one a second per kind

	policy  PeerPolicy
	health  peerHealths
	latency *latencies

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
	if g.tracer != nil {
		return g.tracedGet(ctx, key, true)
	}
	if v, ok := g.mem.get(key); ok {
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
	if g.tracer != nil {
		return g.tracedGet(ctx, key, false)
	}
	if v, ok := g.mem.get(key); ok {
		return ByteView{v}, nil
	}
	return g.load(ctx, key, false)
}

// tracedGet is Get (or GetLocal) with a Tracer: a hit span, or a miss span
// around the load.
func (g *Group) tracedGet(ctx context.Context, key string, mayForward bool) (ByteView, error) {
	if v, ok := g.mem.get(key); ok {
		_, span := g.tracer.Start(ctx, SpanHit, g.name, key, "")
		span.End(nil)
		return ByteView{v}, nil
	}
	ctx, span := g.tracer.Start(ctx, SpanMiss, g.name, key, "")
	v, err := g.load(ctx, key, mayForward)
	span.End(err)
	return v, err
}

// step starts a traced step of a load, or does nothing without a Tracer.
func (g *Group) step(ctx context.Context, kind SpanKind, key string, peer PeerGetter) (context.Context, Span) {
	if g.tracer == nil {
		return ctx, noSpan{}
	}
	addr := ""
	if a, ok := peer.(interface{ Addr() string }); ok {
		addr = a.Addr()
	}
	return g.tracer.Start(ctx, kind, g.name, key, addr)
}

type noSpan struct{}

func (noSpan) End(error) {}

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
		if v, ok := g.mem.peek(key); ok {
			return v, nil
		}
		if remote {
			return g.loadFromPeer(ctx, owner, key)
		}
		return g.loadLocally(ctx, SpanLoad, key)
	})
	if err != nil {
		var pe *PanicError
		if errors.As(err, &pe) {
			g.log.Error("geecache: load panicked", "group", g.name, "key", key, "panic", pe.Value, "stack", string(pe.Stack))
		}
		return ByteView{}, &Error{Group: g.name, Key: key, Err: err}
	}
	return ByteView{v}, nil
}

// loadFromPeer fetches key from its owner and keeps it in the hot cache.
// If the owner is ejected or busy, or fails for a reason other than "not
// found" while callers still wait, the node loads the key itself; a fetch
// slower than the hedge delay races a local load.
func (g *Group) loadFromPeer(ctx context.Context, owner PeerGetter, key string) ([]byte, error) {
	ph := g.health.of(owner)
	if ph != nil {
		switch g.health.admit(ph) {
		case admitEjected:
			g.counters.ejectedLoads.Add(1)
			return g.loadLocally(ctx, SpanFallback, key)
		case admitBusy:
			g.counters.peerBusy.Add(1)
			return g.loadLocally(ctx, SpanFallback, key)
		}
	}
	gen := g.mem.generation(key)
	sctx, span := g.step(ctx, SpanPeer, key, owner)
	v, local, err := g.fetchHedged(sctx, owner, key)
	span.End(err)
	found := err == nil || errors.Is(err, getter.ErrNotFound)
	if ph != nil {
		ph.inFlight.Add(-1)
		outcome := outcomeFailure
		switch {
		case found:
			outcome = outcomeSuccess
		case ctx.Err() != nil && (local == nil || local.err != nil):
			outcome = outcomeNone // the callers left: that says nothing of the peer
		}
		if g.health.done(ph, outcome) {
			g.warn.Log(ctx, slog.LevelWarn, "eject "+ph.addr, "geecache: peer ejected, loading its keys locally",
				slog.String("group", g.name), slog.String("peer", ph.addr), slog.Any("err", err))
		}
	}
	switch {
	case local != nil:
		// The hedge's local load decided: it kept the value in main.
		if local.err == nil {
			g.counters.hedgeLocalWins.Add(1)
		}
		if !found {
			g.counters.peerErrors.Add(1)
		}
		return local.v, local.err
	case err == nil:
		g.counters.peerLoads.Add(1)
		g.mem.add(g.mem.hot, key, v, gen)
		return v, nil
	case found:
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
	g.warn.Log(ctx, slog.LevelWarn, "fail "+peerAddr(owner), "geecache: peer failed, loading locally",
		slog.String("group", g.name), slog.Any("err", err))
	return g.loadLocally(ctx, SpanFallback, key)
}

// loadLocally calls the Getter, as the step kind (SpanLoad, or SpanFallback
// after the owner failed), and keeps the value in the main cache.
func (g *Group) loadLocally(ctx context.Context, kind SpanKind, key string) ([]byte, error) {
	g.counters.localLoads.Add(1)
	gen := g.mem.generation(key)
	sctx, span := g.step(ctx, kind, key, nil)
	v, err := g.getter.Get(sctx, key)
	span.End(err)
	if err != nil {
		if !errors.Is(err, getter.ErrNotFound) {
			g.counters.loadErrors.Add(1)
		}
		return nil, err
	}
	// The Getter may reuse its slice; the cache keeps its own copy.
	v = bytes.Clone(v)
	g.mem.add(g.mem.main, key, v, gen)
	return v, nil
}

// InFlight returns the number of loads this group is running now. Tests
// use it to wait until abandoned loads have finished.
func (g *Group) InFlight() int { return g.forwardFlight.InFlight() + g.localFlight.InFlight() }
