package cache

import "sync/atomic"

// Stats is a snapshot of a group's counters. All counts are since the group
// was created; Bytes and Items are current.
//
// Gets are this node's own callers' only: a request a peer sent is one of
// PeerRequests (or, memory-only, of HandoffServed), so a node that served
// peers does not report their requests as its Gets. Hits counts the
// lookups of all three that memory answered, so the node's hit ratio is
// Hits / (Gets + PeerRequests + HandoffServed).
type Stats struct {
	Gets          int64       // this node's callers' Gets (a GetMany's keys count one each); peers' requests are not Gets
	Hits          int64       // lookups answered from memory (Main.Hits + Hot.Hits): callers' Gets, PeerRequests and HandoffServed alike
	PeerRequests  int64       // requests served for peers (an OpGet, key by key), but memory-only ones
	PeerLoads     int64       // values (or "not found") fetched from owner peers
	PeerErrors    int64       // owner peers that failed to answer
	FallbackLoads int64       // local loads after an owner peer failed
	Abandoned     int64       // loads stopped because every caller had left
	LocalLoads    int64       // calls of the Getter
	LoadErrors    int64       // Getter calls that failed, other than "not found" and those cancelled because no caller waited any more (all left, or the owner answered a hedge first)
	DedupWaits    int64       // Gets that shared a load another Get started
	Hedges        int64       // local loads started beside a slow fetch from the owner
	HedgeWins     int64       // hedges whose local load answered first
	EjectedLoads  int64       // loads elsewhere (next node, or local) because the owner was ejected
	NextPeer      int64       // keys fetched from the next node on the ring because the owner was ejected or failed
	Handoffs      int64       // keys this node owns that their previous owner answered from memory
	HandoffMisses int64       // previous owners asked that did not hold the key (or did not answer in time)
	HandoffServed int64       // memory-only requests served for peers: a key's new owner asking this node
	Offered       int64       // keys offered to their new owners after a change of the ring, or on leaving (OfferKeys)
	TakenOver     int64       // keys offered to this node that it took from their previous owner's memory
	PeerBusy      int64       // local loads because the owner had MaxInFlight requests in flight
	StaleServes   int64       // Gets answered with a stale value (StaleWhileRevalidate)
	Refreshes     int64       // background refreshes of stale values started
	RefreshFails  int64       // background refreshes that failed
	Peers         []PeerStats // the peers the group has fetched from, by address
	Main          CacheStats  // keys this node owns and loaded
	Hot           CacheStats  // copies of keys other nodes own: fetched from them, or loaded by a hedge
}

// CacheStats describes one of a group's two caches.
type CacheStats struct {
	Bytes     int64 // keys plus values held now
	Items     int64 // entries held now
	Hits      int64
	Evictions int64
}

// counters are the group's slow-path counts. Hits are counted per cache
// shard instead, so that a hit writes no counter shared by all cores.
type counters struct {
	misses, peerRequests, peerLoads, peerErrors, fallbacks, abandoned,
	localLoads, loadErrors, hedges, hedgeLocalWins, ejectedLoads, peerBusy,
	staleServes, refreshes, refreshFailures, nextPeer, handoffs, handoffMisses, handoffRequests,
	offered, takenOver atomic.Int64

	// notHeld counts the memory-only requests that memory could not
	// answer (handoffRequests less notHeld are the ones it did: hits).
	notHeld atomic.Int64
}

// Stats returns a snapshot of the group's counters. It only reads: calling
// it, however often, changes nothing the group does. The counters are read
// one by one while lookups go on, so a snapshot taken meanwhile may be off
// by the lookups under way.
func (g *Group) Stats() Stats {
	c := &g.counters
	notHeld, misses := c.notHeld.Load(), c.misses.Load()
	hot := CacheStats{g.mem.hot.Bytes(), g.mem.hot.Len(), g.mem.hot.Hits(), g.mem.hot.Evictions()}
	main := CacheStats{g.mem.main.Bytes(), g.mem.main.Len(), g.mem.main.Hits(), g.mem.main.Evictions()}
	s := Stats{
		Hits:          main.Hits + hot.Hits,
		PeerRequests:  c.peerRequests.Load(),
		HandoffServed: c.handoffRequests.Load(),
		PeerLoads:     c.peerLoads.Load(),
		PeerErrors:    c.peerErrors.Load(),
		FallbackLoads: c.fallbacks.Load(),
		Abandoned:     c.abandoned.Load(),
		LocalLoads:    c.localLoads.Load(),
		LoadErrors:    c.loadErrors.Load(),
		DedupWaits:    g.forwardFlight.Joins() + g.localFlight.Joins(),
		Hedges:        c.hedges.Load(),
		HedgeWins:     c.hedgeLocalWins.Load(),
		EjectedLoads:  c.ejectedLoads.Load(),
		PeerBusy:      c.peerBusy.Load(),
		NextPeer:      c.nextPeer.Load(),
		Handoffs:      c.handoffs.Load(),
		HandoffMisses: c.handoffMisses.Load(),
		Offered:       c.offered.Load(),
		TakenOver:     c.takenOver.Load(),
		StaleServes:   c.staleServes.Load(),
		Refreshes:     c.refreshes.Load(),
		RefreshFails:  c.refreshFailures.Load(),
		Peers:         g.health.stats(),
		Main:          main,
		Hot:           hot,
	}
	// Every lookup in memory counts one hit or one miss, whoever asked:
	// the callers' Gets are those less the peers' requests (one each) and
	// the memory-only requests memory answered (one hit each; the others
	// count neither). Counting them apart would put a shared counter on
	// the hit path.
	s.Gets = max(s.Hits+misses-s.PeerRequests-(s.HandoffServed-notHeld), 0)
	return s
}
