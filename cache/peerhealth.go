package cache

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// PeerPolicy says how a group treats the peers it fetches from: when a
// failing peer is ejected, how many requests may be in flight to one peer,
// and when a slow fetch is hedged with a local load. It works for every
// Peer (net/http, Lambda, in-memory) whose dynamic type is comparable,
// as pointers are, so that the group can tell one peer from another;
// hedging works for all. The zero value of each field
// means its default; a negative value makes NewGroup fail.
type PeerPolicy struct {
	// EjectAfter is how many consecutive failures (errors or timeouts,
	// not "not found") eject a peer: while it is ejected, the keys it owns
	// are loaded locally at once, with no network wait. 0 means 3.
	EjectAfter int

	// EjectFor is how long the first ejection lasts; each further one in a
	// row doubles it, up to MaxEjectFor, with up to 25% random jitter so
	// that nodes do not probe a peer in step. After it, one request goes
	// to the peer as a probe: success brings the peer back, failure ejects
	// it again. Meanwhile, while Gets ask for its keys, the group also
	// asks it in the background, from memory only (HandoffTimeout), an
	// eighth of the ejection's length after it began (up to EjectFor),
	// then after waits that double up to EjectFor; any answer readmits it
	// at once, so that a node back within moments (restarted in place) is
	// not left out for EjectFor. The streak that doubles the ejections
	// ends only when a request succeeds.
	// 0 means 1 s; MaxEjectFor 0 means 30 s, or EjectFor if that is
	// longer. A MaxEjectFor below EjectFor makes NewGroup fail.
	EjectFor, MaxEjectFor time.Duration

	// MaxInFlight caps the requests in flight from this group to one
	// peer; past it, a load is done locally instead of queueing. 0 means
	// 256.
	MaxInFlight int

	// HedgeMin and HedgeMax bound the hedge delay: when the owner has
	// neither answered nor said that it is loading (the net/http binding
	// sends a 102 Processing for it) within it, the group starts a local load beside the fetch and returns
	// whichever answers first (still one local load per key). An owner
	// that says it is loading is waited for as long as it keeps saying so:
	// the hedge starts only after HedgeMax without a sign from it (the
	// net/http binding repeats its 102 every 100 ms while the load runs),
	// so a source of any speed is loaded once in the cluster, and an owner
	// that stops in the middle of a load costs at most HedgeMax after its
	// last sign: a hedge is for a peer that does not answer, not for a
	// slow source. The owner is alive, so a hedge's value (or
	// "not found") is kept as the owner's answer would be, as a copy in
	// the hot cache (not in main), whichever answered first; only if the
	// owner then fails is it kept as the fallback keeps the key. The
	// delay is the 99th percentile of the time recent fetches took to show
	// their owner alive, within the bounds, and 100 ms (within the bounds)
	// until enough fetches are seen; GetMany's batches, which take longer
	// than one key, have a delay of their own made the same way. 0 means
	// 10 ms and 1 s; HedgeMax 0 means 1 s, or HedgeMin if that is longer.
	// A HedgeMax below HedgeMin makes NewGroup fail. Set both to one value
	// for a fixed delay. A delay at
	// the 99th percentile hedges about 1-2% of the fetches that take longer
	// than HedgeMin, each a load of the source: on a node whose fetches
	// often exceed 10 ms (a CPU-bound process; bench/README.md, "The steady
	// loads of a whole budget") raise HedgeMin, or set NoHedge. Over a transport that cannot say
	// "loading" (the Lambda Invoke API, fetch in js/wasm), the owner's
	// loads count in the delay, so it grows to cover a slow source.
	HedgeMin, HedgeMax time.Duration

	// SlowAfter is how long a fetch that a hedge beat may still take: it is
	// not cut short when the callers get the hedge's value, and counts as
	// a failure of the peer only if the peer has not answered it by then,
	// so that a slow peer stays and a hung one is ejected. It also bounds
	// each peer's part of a Remove or Set (within the caller's context):
	// a peer that has not confirmed by then is reported and retried in the
	// background. 0 means 2 s.
	SlowAfter time.Duration

	// NoHedge turns hedging off: a fetch waits for the owner until it
	// answers, fails or the caller's context ends.
	NoHedge bool

	// HandoffTimeout bounds a request that asks a peer for a key from its
	// memory only: the new owner of a key asking its previous owner after
	// the ring changed (a PeerPicker with a PickFallback method, such as
	// picker.Peers, names it), and the background probe that readmits an
	// ejected peer as soon as it answers again. Past it the key is loaded
	// as without the peer. 0 means 100 ms.
	HandoffTimeout time.Duration
}

// Defaults of PeerPolicy, as its field docs state them.
const (
	defaultEjectAfter  = 3
	defaultEjectFor    = time.Second
	defaultMaxEjectFor = 30 * time.Second
	defaultMaxInFlight = 256
	defaultHedgeMin    = 10 * time.Millisecond
	defaultHedgeMax    = time.Second
	defaultSlowAfter   = 2 * time.Second
	defaultHandoff     = 100 * time.Millisecond
)

// withDefaults checks p and fills in its defaults.
func (p PeerPolicy) withDefaults() (PeerPolicy, error) {
	for name, v := range map[string]int64{"EjectAfter": int64(p.EjectAfter), "EjectFor": int64(p.EjectFor),
		"MaxEjectFor": int64(p.MaxEjectFor), "MaxInFlight": int64(p.MaxInFlight), "HedgeMin": int64(p.HedgeMin), "HedgeMax": int64(p.HedgeMax),
		"SlowAfter": int64(p.SlowAfter), "HandoffTimeout": int64(p.HandoffTimeout)} {
		if v < 0 {
			return p, fmt.Errorf("geecache: %w: PeerPolicy.%s is negative", ErrConfig, name)
		}
	}
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if p.EjectAfter == 0 {
		p.EjectAfter = defaultEjectAfter
	}
	if p.MaxInFlight == 0 {
		p.MaxInFlight = defaultMaxInFlight
	}
	def(&p.EjectFor, defaultEjectFor)
	def(&p.MaxEjectFor, max(defaultMaxEjectFor, p.EjectFor))
	def(&p.HedgeMin, defaultHedgeMin)
	def(&p.HedgeMax, max(defaultHedgeMax, p.HedgeMin))
	def(&p.SlowAfter, defaultSlowAfter)
	def(&p.HandoffTimeout, defaultHandoff)
	if p.MaxEjectFor < p.EjectFor {
		return p, fmt.Errorf("geecache: %w: PeerPolicy.MaxEjectFor %v is below EjectFor %v", ErrConfig, p.MaxEjectFor, p.EjectFor)
	}
	if p.HedgeMax < p.HedgeMin {
		return p, fmt.Errorf("geecache: %w: PeerPolicy.HedgeMax %v is below HedgeMin %v", ErrConfig, p.HedgeMax, p.HedgeMin)
	}
	return p, nil
}

// PeerStats describes one peer as a group sees it.
type PeerStats struct {
	Addr                string // the Peer's Addr()
	Ejected             bool   // keys it owns are loaded locally now
	ConsecutiveFailures int64
	Ejections           int64 // times it was ejected since the group was created
	InFlight            int64 // requests to it now
}

// admission is what a peer's health allows for one fetch.
type admission uint8

const (
	admitOK admission = iota
	admitProbe
	admitEjected
	admitBusy
)

// peerHealth is the state of one peer: a breaker (healthy, ejected until a
// time, probing) and the fetches in flight.
type peerHealth struct {
	addr     string
	inFlight atomic.Int64
	// noBatchUntil (Unix nanoseconds) is when the peer, which answered
	// that it cannot batch (an older version), is asked for a batch
	// again; until then its keys are asked key by key (batchfetch.go).
	noBatchUntil atomic.Int64

	mu           sync.Mutex
	failures     int64     // consecutive
	streak       int       // consecutive ejections, for the backoff
	ejectedUntil time.Time // zero when healthy
	ejectedAt    time.Time // when the last ejection began
	probing      bool
	ejections    int64
	bgProbe      bool      // a background probe (handoff.go) is in flight
	bgProbeAt    time.Time // when the last one started
	cold         int       // handoffs it did not answer since coldRing (handoff.go)
	warm         bool      // it has handed a key over since coldRing
	coldUntil    time.Time // not asked for a handoff before then
	coldRing     time.Time // the ring change cold counts from
}

// peerHealths holds a group's peerHealth per Peer.
type peerHealths struct {
	policy PeerPolicy
	m      sync.Map      // Peer -> *peerHealth
	list   func() []Peer // the peers now, if the PeerPicker can list them
	writes retries       // the writes some peers did not confirm (retry.go)
}

// of returns the health of peer, or nil if peer cannot be told apart from
// others (its dynamic type is not comparable).
func (h *peerHealths) of(peer Peer) *peerHealth {
	if !reflect.TypeOf(peer).Comparable() {
		return nil // a sync.Map key must be comparable
	}
	if v, ok := h.m.Load(peer); ok {
		return v.(*peerHealth)
	}
	v, loaded := h.m.LoadOrStore(peer, &peerHealth{addr: peer.Addr()})
	if !loaded && h.list != nil {
		// A peer new to the group: the ring changed, so this is when the
		// state of the peers that left it is forgotten.
		h.prune(h.list(), peer)
	}
	return v.(*peerHealth)
}

// ejected reports whether peer is ejected now (or its probe is in
// flight), without changing its state: a write is not sent to it then but
// counted as not confirmed at once, and retried in the background.
func (h *peerHealths) ejected(peer Peer) bool {
	p := h.of(peer)
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.ejectedUntil.IsZero() && (time.Now().Before(p.ejectedUntil) || p.probing)
}

// isEjected is ejected for a peer the group may never have fetched from
// (a key's next or previous owner): it adds no state for a peer it does
// not know, which is then not ejected.
func (h *peerHealths) isEjected(peer Peer) bool {
	if !reflect.TypeOf(peer).Comparable() {
		return false
	}
	v, ok := h.m.Load(peer)
	if !ok {
		return false
	}
	p := v.(*peerHealth)
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.ejectedUntil.IsZero() && (time.Now().Before(p.ejectedUntil) || p.probing)
}

// startProbe reports whether a background probe of the ejected peer p may
// start now, and records it as started if so: at most one in flight, and
// each after a wait as long as the ejection had lasted at the last probe
// (or at the ejection), at least an eighth of the ejection's length and at
// most EjectFor. So a peer back soon after a first ejection (a node
// restarted in place, whose port was closed for a moment) is readmitted
// within an eighth of EjectFor, not at the end of it; one down for long is
// asked once per EjectFor; and one that answers probes but fails requests
// (endProbe keeps its streak) is readmitted less often each time.
func (h *peerHealths) startProbe(p *peerHealth) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	floor := p.ejectedUntil.Sub(p.ejectedAt) / 8
	wait := min(max(p.bgProbeAt.Sub(p.ejectedAt), floor), h.policy.EjectFor)
	if p.bgProbe || p.ejectedUntil.IsZero() || now.Sub(p.bgProbeAt) < wait {
		return false
	}
	p.bgProbe, p.bgProbeAt = true, now
	return true
}

// endProbe records the end of a background probe: a peer that answered
// is readmitted. Its streak stays until a request succeeds (done): a
// memory-only answer shows the peer up, not that it can load, and a peer
// that fails again is ejected for longer.
func (h *peerHealths) endProbe(p *peerHealth, alive bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bgProbe = false
	if alive {
		p.failures, p.ejectedUntil = 0, time.Time{}
	}
}

// admit decides whether a fetch may go to the peer, and counts it in
// flight if so (release undoes that).
func (h *peerHealths) admit(p *peerHealth) admission {
	a := admitOK
	p.mu.Lock()
	if !p.ejectedUntil.IsZero() {
		switch {
		case time.Now().Before(p.ejectedUntil) || p.probing:
			a = admitEjected
		default:
			p.probing, a = true, admitProbe
		}
	}
	p.mu.Unlock()
	if a == admitEjected {
		return a
	}
	if p.inFlight.Add(1) > int64(h.policy.MaxInFlight) {
		p.inFlight.Add(-1)
		if a == admitProbe {
			h.done(p, outcomeNone, true)
		}
		return admitBusy
	}
	return a
}

// fetchOutcome is how a fetch from a peer ended, for its health.
type fetchOutcome uint8

const (
	outcomeNone    fetchOutcome = iota // says nothing of the peer (the caller left)
	outcomeSuccess                     // a value or "not found"
	outcomeFailure                     // an error, a timeout, or too slow for the hedge
)

// done records a fetch's outcome, after release of its in-flight slot;
// probe says whether the fetch was the probe admit let through. Only the
// probe ends or renews an ejection: a fetch that began before the peer was
// ejected and ends during it changes nothing but the count of failures. It
// reports whether the peer was ejected by it.
func (h *peerHealths) done(p *peerHealth, o fetchOutcome, probe bool) (ejected bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if probe {
		p.probing = false
	}
	switch o {
	case outcomeSuccess:
		p.failures = 0
		if probe || p.ejectedUntil.IsZero() {
			p.streak, p.ejectedUntil = 0, time.Time{}
		}
	case outcomeFailure:
		p.failures++
		if probe || (p.ejectedUntil.IsZero() && p.failures >= int64(h.policy.EjectAfter)) {
			p.streak++
			p.ejections++
			p.ejectedAt = time.Now()
			p.bgProbeAt = p.ejectedAt
			p.ejectedUntil = p.ejectedAt.Add(h.backoff(p.streak))
			return true
		}
	}
	return false
}

// backoff is the length of the streak-th ejection in a row: EjectFor
// doubled each time up to MaxEjectFor, plus up to 25% jitter.
func (h *peerHealths) backoff(streak int) time.Duration {
	d := h.policy.EjectFor
	for i := 1; i < streak && d < h.policy.MaxEjectFor; i++ {
		d *= 2
	}
	d = min(d, h.policy.MaxEjectFor)
	return d + time.Duration(rand.Int64N(int64(d)/4+1))
}

// prune forgets the peers other than added that are not in current (those
// that left the ring) and have nothing in flight, so that the state of a
// changing cluster does not grow without bound. It runs when a peer is first
// seen, so the state a group holds is bounded by the peers it has now.
func (h *peerHealths) prune(current []Peer, added Peer) {
	keep := peerSet(current)
	h.m.Range(func(k, v any) bool {
		if k != added && !keep[k.(Peer)] && v.(*peerHealth).inFlight.Load() == 0 {
			h.m.Delete(k)
		}
		return true
	})
}

// peerSet returns the comparable peers of peers, as a set.
func peerSet(peers []Peer) map[Peer]bool {
	set := make(map[Peer]bool, len(peers))
	for _, p := range peers {
		if reflect.TypeOf(p).Comparable() {
			set[p] = true
		}
	}
	return set
}

// stats returns a snapshot of the state of the peers that are still peers
// (all of them if the PeerPicker cannot list them), or have requests in
// flight. It changes nothing.
func (h *peerHealths) stats() []PeerStats {
	var current map[Peer]bool
	if h.list != nil {
		current = peerSet(h.list())
	}
	var out []PeerStats
	now := time.Now()
	h.m.Range(func(k, v any) bool {
		p := v.(*peerHealth)
		if current != nil && !current[k.(Peer)] && p.inFlight.Load() == 0 {
			return true
		}
		p.mu.Lock()
		out = append(out, PeerStats{
			Addr:                p.addr,
			Ejected:             !p.ejectedUntil.IsZero() && (now.Before(p.ejectedUntil) || p.probing),
			ConsecutiveFailures: p.failures,
			Ejections:           p.ejections,
			InFlight:            p.inFlight.Load(),
		})
		p.mu.Unlock()
		return true
	})
	slices.SortFunc(out, func(a, b PeerStats) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}
