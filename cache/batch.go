package cache

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/geecache/geecache/cache/internal/singleflight"
)

// This file is the read path of many keys at once: GetMany sorts the keys
// into hits, keys this node loads, and keys each owner peer is asked for
// in one Batch; the batch itself (claims, health, keep, fallback) is in
// batchfetch.go, its request and hedge in batchhedge.go.

// manyResult is one key's result in a GetMany.
type manyResult struct {
	e   entry
	err error
}

// ownerKeys are the keys of a GetMany that one peer owns, by index.
type ownerKeys struct {
	peer Peer
	idx  []int
	n    int // len(idx) once GetMany has sorted every key
}

// GetMany returns the values of keys, each as Get would return it: it calls
// each once per key, in the order of keys, with the key's index, its value
// and an error for that key alone (a key that does not exist: an error
// wrapping getter.ErrNotFound). The keys fresh in memory are answered from
// it; the keys each other peer owns are asked from it in one request (a
// transport splits one over its limits), and the keys this node owns are
// loaded here, concurrently, but at most 32 at once per GetMany call (a
// peer's batch too: a GetMany of 10,000 keys does not call the Getter
// 10,000 times at once). Loads are still shared per key: a key that a Get
// or another GetMany is loading at the same moment is loaded once, and
// waiting for that load takes none of the 32; hits never wait for one. A
// peer that fails, is ejected, or does not answer a key, costs only its
// keys a fallback, as for Get: with a peer set that names a key's next live
// node (picker.Peers), they are asked from it in one batch per node, which
// loads each once for the whole cluster; else, or if that fails too, they
// load here. The same health, hedging and integrity rules as Get apply (a
// batch's hedge delay is the 99th percentile of recent batches' times, not
// single keys'); a peer whose transport cannot batch is asked key by key.
//
// each runs on the caller's goroutine once every key has its result; the
// results are kept in one slice, not a map, so the cost per key of a batch
// of hits is a lookup. If ctx ends first, the keys not yet loaded get
// ctx's error, and their loads go on for the other callers waiting for
// them.
func (g *Group) GetMany(ctx context.Context, keys []string, each func(i int, v ByteView, err error)) {
	if len(keys) == 0 {
		return
	}
	res := g.getMany(ctx, keys, nil)
	for i := range keys {
		each(i, ByteView{b: res[i].e.v}, res[i].err)
	}
}

// getMany is GetMany, and with asker a peer's OpGet of many keys, which
// is answered here alone, as getLocal answers one key, and hears that a
// load is under way (PeerReply.Loading).
func (g *Group) getMany(ctx context.Context, keys []string, asker PeerReply) []manyResult {
	mayForward := asker == nil
	res := make([]manyResult, len(keys))
	var owners []ownerKeys
	var at []int32 // each key's owner in owners, plus one (0: not remote)
	remotes := 0
	var here []int        // the keys loaded here, by index
	var hereKeys []string // and by name
	var wg sync.WaitGroup
	if !mayForward {
		g.counters.peerRequests.Add(int64(len(keys))) // one per key, as a Get each
	}
	for i, key := range keys {
		v, exp, ok := g.mem.get(key)
		if ok && (g.fresh.isFresh(exp) || g.mem.second(key, &v, &exp, g.fresh.nanos())) {
			res[i].e, res[i].err = g.fresh.cached(v, exp)
			if res[i].err != nil {
				res[i].err = &Error{Group: g.name, Key: key, Err: res[i].err}
			}
			continue
		}
		if asker != nil {
			// A peer's batch: its keys may share one string, which a
			// load's key must not keep alive.
			key = strings.Clone(key)
		}
		if ok && g.fresh.nanos() < exp+int64(g.fresh.stale) && !g.fresh.isNotFound(v) {
			res[i].e, res[i].err = g.miss(ctx, key, asker, v, exp, true) // served stale at once
			continue
		}
		if ok {
			g.mem.unhit(key)
		}
		g.counters.misses.Add(1)
		var owner Peer
		remote := false
		if mayForward && g.peers != nil {
			owner, remote = g.pickPeer(key)
		}
		if !remote {
			here = append(here, i)
			hereKeys = append(hereKeys, key) // a peer's: the copy, which the load keeps
			continue
		}
		j := slices.IndexFunc(owners, func(o ownerKeys) bool { return samePeer(o.peer, owner) })
		if j < 0 {
			j, owners = len(owners), append(owners, ownerKeys{peer: owner})
		}
		if at == nil {
			at = make([]int32, len(keys))
		}
		at[i] = int32(j) + 1
		owners[j].n++
		remotes++
	}
	if remotes > 0 {
		// Each owner's indexes, in one allocation for all of them: growing
		// one slice per owner costs about 0.13 allocations more per key
		// (TestGetManyAllocationsPerKey).
		all := make([]int, remotes)
		for j := range owners {
			owners[j].idx, all = all[:0:owners[j].n], all[owners[j].n:]
		}
		for i, j := range at {
			if j > 0 {
				owners[j-1].idx = append(owners[j-1].idx, i)
			}
		}
	}
	slots := make(loadSlots, maxManyLoads)
	for _, o := range owners {
		wg.Go(func() { g.fetchMany(ctx, o.peer, keys, o.idx, res, slots) })
	}
	if len(here) > 0 {
		if asker != nil {
			asker.Loading() // a load is under way: the asking node waits for it
		}
		g.loadMany(ctx, hereKeys, here, res, &wg, slots)
	}
	wg.Wait()
	return res
}

// maxManyLoads is how many loads from this node's Getter one GetMany runs
// at once. Without a bound, a GetMany of 10,000 keys this node owns (or a
// peer's batch of 1,000) called the Getter 10,000 times at once: as many
// database queries or connections, from one call. 32 is about what a
// database's connection pool serves at once (tens), so that a GetMany
// neither queues far past it nor takes it all from the node's other
// callers for long, and it still hides a source's latency: 1,000 keys of
// 5 ms each load in about 160 ms, where one at a time would take 5 s.
// Hits are not loads, and neither are keys that join a load in flight.
const maxManyLoads = 32

// loadSlots bound the loads of one GetMany to maxManyLoads at once: its
// own keys', and the ones it makes for keys an owner could not answer
// (fallback, copies, hedge, key by key), alike.
type loadSlots chan struct{}

func (s loadSlots) acquire() { s <- struct{}{} }

func (s loadSlots) release() { <-s }

// workers runs f(0), ..., f(n-1) on at most maxManyLoads goroutines (fewer
// if n is smaller), each started by start (wg.Go, or a plain go), which
// take the next index in turn. A GetMany's loads wait for one of its
// maxManyLoads slots anyway, so one goroutine per key would only hold a
// stack each while it waits: thousands for one call.
func workers(n int, start func(func()), f func(p int)) {
	var next atomic.Int64
	for range min(n, maxManyLoads) {
		start(func() {
			for p := next.Add(1) - 1; p < int64(n); p = next.Add(1) - 1 {
				f(int(p))
			}
		})
	}
}

// goStart starts f on a goroutine of its own: workers' start for
// goroutines that nobody waits for.
func goStart(f func()) { go f() }

// loadMany loads the keys ks into res, ks[p] as the result of index
// idx[p]: at most maxManyLoads at once, on as many goroutines of wg. A key that a
// load in flight is loading already (a Get's, another GetMany's, a peer's)
// takes no slot: it is waited for here, on the caller's goroutine, and
// loadMany returns once those have their result. (A key whose load starts
// between that check and its turn is joined by its slot, which then
// waits: that race costs a slot for a while, not a second load.)
func (g *Group) loadMany(ctx context.Context, ks []string, idx []int, res []manyResult, wg *sync.WaitGroup, slots loadSlots) {
	claims := make([]singleflight.Claim[entry, loadArg], len(ks))
	joined := g.localFlight.JoinMany(ks, claims)
	var todo []int // the keys to load, as positions in ks; nil: all of them
	if joined > 0 {
		todo = make([]int, 0, len(ks)-joined)
		for p := range ks {
			if !claims[p].Joined() {
				todo = append(todo, p)
			}
		}
	}
	workers(len(ks)-joined, wg.Go, func(q int) {
		p := q
		if todo != nil {
			p = todo[q]
		}
		slots.acquire()
		res[idx[p]].e, res[idx[p]].err = g.load(ctx, ks[p], false, nil)
		slots.release()
	})
	if joined == 0 {
		return
	}
	for p, cl := range claims {
		if cl.Joined() {
			e, err := g.localFlight.Wait(ctx, ks[p], cl)
			res[idx[p]].e, res[idx[p]].err = g.loaded(ctx, ks[p], e, err)
		}
	}
}

// fetchMany loads the keys of idx from their owner: each key is claimed in
// the forward flight (or joins the load of it in flight), all under one
// lock, and the claimed ones are asked in one batch. idx is the caller's
// to reuse: the batch's keys are compacted into it.
func (g *Group) fetchMany(ctx context.Context, owner Peer, keys []string, idx []int, res []manyResult, slots loadSlots) {
	ks := make([]string, len(idx))
	for p, i := range idx {
		ks[p] = keys[i]
	}
	claims := make([]singleflight.Claim[entry, loadArg], len(idx))
	g.forwardFlight.ClaimMany(ctx, ks, claims)
	type joinedKey struct {
		i  int
		cl singleflight.Claim[entry, loadArg]
	}
	var joined []joinedKey
	gens := make([]uint64, len(idx))
	n := 0 // the keys to ask, compacted into ks, idx, claims and gens
	for p, i := range idx {
		key, cl := ks[p], claims[p]
		if cl.Joined() {
			joined = append(joined, joinedKey{i, cl})
			continue
		}
		gen, v, exp, ok := g.mem.look(key)
		if ok && g.fresh.isFresh(exp) {
			// A load that ended just before the claim left it in memory.
			e, err := g.fresh.cached(v, exp)
			g.forwardFlight.Finish(key, cl, e, err)
			res[i] = manyResult{e, g.keyErr(key, err)}
			continue
		}
		ks[n], idx[n], claims[n], gens[n] = key, i, cl, gen
		n++
	}
	if n > 0 {
		b := &batch{g: g, owner: owner, ctx: ctx, keys: ks[:n], idx: idx[:n], claims: claims[:n], gens: gens[:n], slots: slots}
		b.run(res)
	}
	for _, j := range joined {
		e, err := g.forwardFlight.Wait(ctx, keys[j.i], j.cl)
		res[j.i] = manyResult{e, g.keyErr(keys[j.i], err)}
	}
}

// keyErr wraps a load's error of key as Get does.
func (g *Group) keyErr(key string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) && e.Group == g.name && e.Key == key {
		return err
	}
	return &Error{Group: g.name, Key: key, Err: err}
}
