package cache

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/geecache/geecache/cache/internal/lru"
	"github.com/geecache/geecache/cache/internal/singleflight"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/ratelog"
	"github.com/geecache/geecache/internal/valuesum"
)

// This file is the read path, top to bottom: Get (and a peer's OpGet), the memory
// lookup (a hit, a stale value, or a miss), the load through the group's
// flights (from the owner peer, or from this node's Getter), and keep,
// which puts the loaded value in memory. The hedge beside a slow fetch is
// in hedge.go; the clock, the TTL arithmetic and the background refresh of
// a stale value in expiry.go.

// A Group is a cache namespace: a Getter that loads values, the memory
// that keeps them, and the peers among which its keys are spread. Groups
// are created with Registry.NewGroup and are safe for concurrent use.
type Group struct {
	name   string
	getter getter.Getter
	peers  PeerPicker
	router fallbackPicker // peers, if it can name a key's next and previous owners (prevowner.go)
	log    *slog.Logger
	tracer Tracer
	mem    *memory
	warn   *ratelog.Limiter // the group's warnings, one a second per kind

	policy  PeerPolicy
	health  peerHealths
	latency *latencies

	fresh freshness // expiry: the clock, TTLs, stale serving

	// Loads that ask the owner peer, and loads from this node's Getter.
	// Kept apart so that a request from a peer, which must not be
	// forwarded, never joins a load that forwards it.
	forwardFlight singleflight.Group[entry, loadArg]
	localFlight   singleflight.Group[entry, loadArg]

	counters counters
	purge    purgeState // purge.go
	offer    offerState // offer.go

	// batchLatency is latency for the batches of GetMany, which take
	// longer than one key (batchhedge.go). At the end, so that the fields of
	// the single-key paths keep their offsets.
	batchLatency *latencies
}

// Name returns the group's name.
func (g *Group) Name() string { return g.name }

// Get returns the value of key: from this node's memory if it is there
// and fresh, else from the peer that owns the key, else (when this node
// owns it, or the owner cannot answer) from the group's Getter. Concurrent
// Gets of one key share one load. A key that does not exist yields an error
// wrapping getter.ErrNotFound. Get returns ctx's error as soon as ctx ends;
// the load goes on for the other callers waiting for it.
func (g *Group) Get(ctx context.Context, key string) (ByteView, error) {
	e, err := g.get(ctx, key, nil)
	return ByteView{b: e.v}, err
}

// getLocal answers a peer's OpGet (asker: its reply) or OpPeek (peek) of
// key: from memory or this node's Getter, never forwarded to another peer,
// even if this node's peer list names another owner, so that a request
// makes one hop and nodes with different peer lists cannot send a request
// around in a loop. It also returns how long the value stays fresh here
// (0: it does not expire), or with an error wrapping getter.ErrNotFound,
// how long that answer may be cached (0: not at all): the transport sends
// it with the value, so that copies on other nodes expire when this node's
// does.
func (g *Group) getLocal(ctx context.Context, key string, peek bool, asker PeerReply) (ByteView, time.Duration, error) {
	var e entry
	var err error
	if peek {
		g.counters.handoffRequests.Add(1)
		e, err = g.held(key)
	} else {
		g.counters.peerRequests.Add(1)
		e, err = g.get(ctx, key, asker)
	}
	v := ByteView{b: e.v}
	if err == nil && len(e.v) >= valuesum.Min {
		v.sum = g.mem.sum(key, e.v) // a peer's request: the server sends the value's checksum
	}
	return v, g.fresh.remaining(e.exp), err
}

// get answers a Get (asker nil: it may forward) or a peer's OpGet from
// memory when it can: a fresh value, or a cached "not found", in either
// cache is a hit. Anything else is a miss, traced as one step around what
// follows.
func (g *Group) get(ctx context.Context, key string, asker PeerReply) (entry, error) {
	v, exp, ok := g.mem.get(key)
	if ok && (g.fresh.isFresh(exp) || g.mem.second(key, &v, &exp, g.fresh.nanos())) {
		e, err := g.fresh.cached(v, exp)
		if err != nil {
			err = &Error{Group: g.name, Key: key, Err: err}
		}
		if g.tracer != nil {
			_, span := g.tracer.Start(ctx, spanHit, g.name, key, "")
			span.End(err)
		}
		return e, err
	}
	ctx, span := g.step(ctx, spanMiss, key, nil)
	e, err := g.miss(ctx, key, asker, v, exp, ok)
	span.End(err)
	return e, err
}

// miss answers a Get that memory could not: an expired value (found, ok)
// still in its stale window is served at once while one refresh runs in
// the background (see refresh in expiry.go); anything else is loaded.
func (g *Group) miss(ctx context.Context, key string, asker PeerReply, v []byte, exp int64, found bool) (entry, error) {
	mayForward := asker == nil
	if found {
		if g.fresh.nanos() < exp+int64(g.fresh.stale) && !g.fresh.isNotFound(v) {
			g.counters.staleServes.Add(1)
			g.refresh(key, mayForward)
			return entry{v, exp}, nil
		}
		g.mem.unhit(key) // found, but not usable: a miss, not a hit
	}
	g.counters.misses.Add(1)
	return g.load(ctx, key, mayForward, asker)
}

// step starts a traced step of a load, or does nothing without a Tracer.
func (g *Group) step(ctx context.Context, kind string, key string, peer Peer) (context.Context, Span) {
	if g.tracer == nil {
		return ctx, noSpan{}
	}
	addr := ""
	if peer != nil {
		addr = peer.Addr()
	}
	return g.tracer.Start(ctx, kind, g.name, key, addr)
}

type noSpan struct{}

func (noSpan) End(error) {}

// load loads key through the group's flights: from the owner peer when
// mayForward and a peer owns it, else locally. asker, a peer's request
// that waits for the load, hears that one is under way: the peer tells
// the asking node, which waits rather than hedging.
func (g *Group) load(ctx context.Context, key string, mayForward bool, asker PeerReply) (entry, error) {
	var owner Peer
	remote := false
	if g.peers != nil {
		owner, remote = g.pickPeer(key)
	}
	if asker != nil {
		asker.Loading()
	}
	var e entry
	var err error
	if remote && mayForward {
		e, err = g.forwardFlight.DoLoader(ctx, key, (*forwardLoader)(g), loadArg{owner: owner})
	} else {
		e, err = g.localFlight.DoLoader(ctx, key, (*localLoader)(g), loadArg{picked: true, remote: remote})
	}
	return g.loaded(ctx, key, e, err)
}

// loaded is what load returns for a load of key that ended with e and
// err: a panic is logged, and err is wrapped in an *Error.
func (g *Group) loaded(ctx context.Context, key string, e entry, err error) (entry, error) {
	if err != nil {
		var pe *PanicError
		if errors.As(err, &pe) {
			g.warn.Log(ctx, slog.LevelError, "panic", "geecache: load panicked", slog.String("group", g.name),
				slog.String("key", key), slog.Any("panic", pe.Value), slog.String("stack", string(pe.Stack)))
		}
		return e, &Error{Group: g.name, Key: key, Err: err}
	}
	return e, nil
}

// The loads of the flights, as singleflight.Loaders: a *Group converted to
// one of these, and the owner as the argument, are passed without an
// allocation, where a closure over the key and owner would cost one per
// miss: the loader is a pointer, which an interface holds as it is, and
// the argument a loadArg, the flights' argument type, which the flight
// keeps by value in the load's task record (boxed in an interface, a
// struct or a uint64 would cost an allocation).
type (
	// localLoader loads a key from this node's Getter.
	localLoader Group
	// forwardLoader loads a key from the peer that owns it.
	forwardLoader Group
	// copyLoader loads a key another live node owns, as a copy (see
	// loadCopy): a hedge's load, or a busy owner's.
	copyLoader Group
)

// loadArg is the argument of a flight's load: what its caller knows that
// the load needs. Each loader reads the fields it names.
type loadArg struct {
	owner Peer   // forwardLoader, aloneLoader: the peer to fetch from
	gen   uint64 // copyLoader, aloneLoader: key's generation the caller noted (see memory.gens)
	next  bool   // aloneLoader: a failed owner's key may take the step to the next node (loadFromPeer's next)

	// localLoader: picked is whether the caller asked this node's ring who
	// owns the key, and remote its answer, whether another node does (this
	// node loads it for that owner: creditTakenOver), so that the ring is
	// not asked again; if not picked, the load asks.
	picked, remote bool
}

// Load loads key locally, unless a load that finished just before this one
// started has left it in memory, or the key's previous owner has it in
// memory (askPreviousOwner, prevowner.go). a.picked and a.remote say who owns key.
func (l *localLoader) Load(ctx context.Context, key string, a loadArg, _ singleflight.Flight[entry, loadArg]) (entry, error) {
	g := (*Group)(l)
	gen, v, exp, ok := g.mem.look(key)
	if ok && g.fresh.isFresh(exp) {
		return g.fresh.cached(v, exp)
	}
	if g.router == nil { // no previous owner to ask, no owner to credit
		return g.loadLocally(ctx, spanLoad, key, false, gen)
	}
	if e, err, ok := g.askPreviousOwner(ctx, key, gen); ok {
		return e, err
	}
	e, err := g.loadLocally(ctx, spanLoad, key, false, gen)
	g.creditTakenOver(key, a.picked, a.remote)
	return e, err
}

// Load fetches key from its owner (a.owner), unless a load that finished
// just before this one started has left it in memory. A hedge that
// answers first publishes through f.
func (l *forwardLoader) Load(ctx context.Context, key string, a loadArg, f singleflight.Flight[entry, loadArg]) (entry, error) {
	g := (*Group)(l)
	gen, v, exp, ok := g.mem.look(key)
	if ok && g.fresh.isFresh(exp) {
		return g.fresh.cached(v, exp)
	}
	return g.loadFromPeer(ctx, a.owner, key, true, gen, f)
}

// Load loads key locally as a copy (loadCopy), with the generation its
// caller noted (a.gen) when it looked in memory.
func (l *copyLoader) Load(ctx context.Context, key string, a loadArg, _ singleflight.Flight[entry, loadArg]) (entry, error) {
	return (*Group)(l).loadLocally(ctx, spanFallback, key, true, a.gen)
}

// loadCopy loads key here for an owner that is alive, and keeps it as a
// copy. Where a node keeps a key it loads itself but does not own (by its
// ring) is one rule, for Get and GetMany alike:
//
//   - The node it would ask is alive, or not known to have failed (a hedge
//     beside a slow fetch; a busy peer, past MaxInFlight; a GetMany batch
//     its caller left, see batch.abandon): that node holds the key, so
//     the value is a copy, kept in hot as a fetched value is (keepCopy),
//     never in main and not credited as taken over. This holds for a
//     failed owner's next node too when it is the one that is busy.
//   - The owner failed (ejected, or this request failed) and this node is
//     the key's next live node, or the step to the next node was taken
//     already, or there is no router: this node stands in for the owner,
//     and the value goes in main, credited as taken over (fallback; a
//     hedge's copy is moved there by keepFallback).
//   - A peer asked this node for it (an OpGet): that peer routes the key
//     here (as its owner or next node), so this node holds it for the
//     peers that ask, in main (creditTakenOver, also when the rings
//     disagree).
//
// The load runs in the local flight, so it joins a load of key already
// under way here (a hedge's, or a peer's request).
//
// gen is the generation the load of the caller noted (see memory.gens):
// a copy is kept only if key has not changed since, so that a copy never
// outlives a write that its caller's load came before.
func (g *Group) loadCopy(ctx context.Context, key string, gen uint64) (entry, error) {
	return g.localFlight.DoLoader(ctx, key, (*copyLoader)(g), loadArg{gen: gen})
}

// loadFromPeer fetches key from its owner and keeps it in the hot cache.
// If the owner is ejected, or fails for a reason other than "not found"
// while callers still wait, the key is fetched from the next live node on
// the ring when next is set (it loads the key once for every node; see
// prevowner.go), else the node loads it itself. A busy owner's key, and a
// fetch slower than the hedge delay (which races a local load), are
// loaded here as a copy (loadCopy).
//
// gen is key's generation from before the load last looked in memory
// (memory.look): what the load keeps is checked against it. flight is the
// forward flight's load that this fetch answers, through which a hedge
// publishes (see fetch.hedge); the zero Flight publishes nothing.
func (g *Group) loadFromPeer(ctx context.Context, owner Peer, key string, next bool, gen uint64, flight singleflight.Flight[entry, loadArg]) (entry, error) {
	ph := g.health.of(owner)
	probe := false
	if ph != nil {
		switch g.health.admit(ph) {
		case admitEjected:
			g.counters.ejectedLoads.Add(1)
			g.probe(owner, ph, key)
			return g.fallback(ctx, key, next, nil, gen, flight)
		case admitBusy:
			g.counters.peerBusy.Add(1)
			return g.loadCopy(ctx, key, gen) // the owner is alive: a copy
		case admitProbe:
			probe = true
		}
	}
	sctx, span := g.step(ctx, spanPeer, key, owner)
	v, ttl, local, err := g.fetchHedged(sctx, owner, key, gen, ph, probe, flight)
	span.End(err)
	answered := found(err)
	switch {
	case local != nil:
		// The hedge's local load decided: it kept its copy in hot (and
		// counted its win if it published it).
		if local.err == nil && !local.published.Load() {
			g.counters.hedgeLocalWins.Add(1)
		}
		if !answered {
			if !local.published.Load() { // (a fetch that failed after the hedge answered is not counted)
				g.counters.peerErrors.Add(1)
			}
			if found(local.err) {
				g.keepFallback(key, next) // the owner failed: the hedge was the fallback
			}
		}
		return local.e, local.err
	case answered:
		g.counters.peerLoads.Add(1)
		return g.keepPeer(key, keyAnswer{v, ttl, err}, gen, next)
	}
	g.counters.peerErrors.Add(1)
	if ctx.Err() != nil {
		// Every caller has gone: no one wants a fallback load.
		g.counters.abandoned.Add(1)
		return entry{}, err
	}
	g.warn.Log(ctx, slog.LevelWarn, "fail "+owner.Addr(), "geecache: peer failed, loading elsewhere",
		slog.String("group", g.name), slog.Any("err", err))
	return g.fallback(ctx, key, next, &g.counters.fallbacks, gen, flight)
}

// loadLocally calls the Getter, as the step kind (spanLoad, or spanFallback
// after the owner failed or beside a slow one), and keeps the value in the
// main cache, or with asCopy (loadCopy: a hedge's or a busy owner's load)
// as a copy (keepCopy). A call
// that fails because its load was cancelled (no caller waits for it any
// more: they left, or the owner answered the hedge first) is not a load
// error: the source did not fail.
func (g *Group) loadLocally(ctx context.Context, kind string, key string, asCopy bool, gen uint64) (entry, error) {
	g.counters.localLoads.Add(1)
	sctx, span := g.step(ctx, kind, key, nil)
	var v []byte
	var ttl time.Duration
	var err error
	if tg, ok := g.getter.(getter.TTLGetter); ok {
		v, ttl, err = tg.GetTTL(sctx, key)
	} else {
		v, err = g.getter.Get(sctx, key)
	}
	span.End(err)
	if err != nil && !errors.Is(err, getter.ErrNotFound) {
		if ctx.Err() == nil {
			g.counters.loadErrors.Add(1)
		}
		return entry{}, err
	}
	if err == nil {
		// The Getter may reuse its slice: the cache keeps its own copy.
		// (Not bytes.Clone, whose append runs growslice: 110 instructions
		// more a miss, by callgrind, on BenchmarkGetMiss/background/serial.)
		v = append(make([]byte, 0, len(v)), v...)
		if ttl <= 0 {
			ttl = g.fresh.ttl
		}
	} else {
		ttl = g.fresh.notFoundTTL
	}
	if asCopy {
		return g.keepCopy(key, v, ttl, err, gen)
	}
	return g.keep(g.mem.main, key, v, ttl, err, gen)
}

// keepCopy keeps a copy's load of key (loadCopy; a value, or with err a
// "not found") as a value fetched from the owner is kept (keepPeer): in the hot
// cache, for ttl, unless key changed since gen or a Purge is still
// reaching the peers. If the owner's answer is in hot already (it answered
// first, and the callers got it), that copy stays: a local load keeps nothing
// over it. Either way one copy is held, and the next Get here is a hit.
func (g *Group) keepCopy(key string, v []byte, ttl time.Duration, err error, gen uint64) (entry, error) {
	if _, exp, ok := g.mem.hot.Peek(key); ok && g.fresh.isFresh(exp) {
		exp, _ := g.fresh.expiry(ttl)
		if err != nil {
			return entry{exp: exp}, err
		}
		return entry{v, exp}, nil
	}
	return g.keep(g.mem.hot, key, v, ttl, err, gen)
}

// keep stores the result of a load in c (main or hot) for ttl, unless key
// changed since gen: a value, or with err (a "not found") the negative
// marker when ttl is positive.
func (g *Group) keep(c *lru.Cache, key string, v []byte, ttl time.Duration, err error, gen uint64) (entry, error) {
	exp, now := g.fresh.expiry(ttl)
	if c == g.mem.hot && g.hotBlocked() {
		return entry{v, exp}, err // a Purge is still reaching the peers: no copy
	}
	if err != nil {
		if exp != 0 {
			g.mem.add(c, key, g.fresh.negative, gen, exp, now)
		}
		return entry{exp: exp}, err
	}
	g.mem.add(c, key, v, gen, exp, now)
	return entry{v, exp}, nil
}
