package cache

import (
	"cmp"
	"fmt"
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
// Peer (net/http, Lambda, in-memory) whose dynamic type is comparable, as
// pointers are, so that the group can tell one peer from another; hedging
// works for all. The zero value of each field means its default; a negative
// value makes NewGroup fail.
type PeerPolicy struct {
	// EjectAfter is how many consecutive failures (errors or timeouts,
	// not "not found") eject a peer: while it is ejected, the keys it owns
	// are asked of their next live node on the ring, which loads each once
	// for the cluster (with a PeerPicker that names it, as picker.Peers
	// does), else loaded here; neither waits for the ejected peer. 0 means 3.
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
	// sends a 102 Processing for it) within it, the group starts a local
	// load beside the fetch and returns whichever answers first (still
	// one local load per key). An owner that says it is loading is waited
	// for as long as it keeps saying so: the hedge starts only after
	// HedgeMax without a sign from it (the net/http binding repeats its
	// 102 every 100 ms while the load runs), so a source of any speed is
	// loaded once in the cluster, and an owner that stops in the middle
	// of a load costs at most HedgeMax after its last sign: a hedge is
	// for a peer that does not answer, not for a slow source. The owner
	// is alive, so a hedge's value (or "not found") is kept as the
	// owner's answer would be, as a copy in the hot cache (not in main),
	// whichever answered first; only if the owner then fails is it kept
	// as the fallback keeps the key. The delay is the 99th percentile of
	// the time recent fetches took to show their owner alive, within the
	// bounds, and 100 ms (within the bounds) until enough fetches are
	// seen; GetMany's batches, which take longer than one key, have a
	// delay of their own made the same way. 0 means 10 ms and 1 s;
	// HedgeMax 0 means 1 s, or HedgeMin if that is longer. A HedgeMax
	// below HedgeMin makes NewGroup fail. Set both to one value for a
	// fixed delay. A delay at the 99th percentile hedges about 1-2% of
	// the fetches that take longer than HedgeMin, each a load of the
	// source: on a node whose fetches often exceed 10 ms (a CPU-bound
	// process; bench/README.md, "The steady loads of a whole budget")
	// raise HedgeMin, or set NoHedge. Over a transport that cannot say
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
	p.EjectAfter = cmp.Or(p.EjectAfter, defaultEjectAfter)
	p.MaxInFlight = cmp.Or(p.MaxInFlight, defaultMaxInFlight)
	p.EjectFor = cmp.Or(p.EjectFor, defaultEjectFor)
	p.MaxEjectFor = cmp.Or(p.MaxEjectFor, max(defaultMaxEjectFor, p.EjectFor))
	p.HedgeMin = cmp.Or(p.HedgeMin, defaultHedgeMin)
	p.HedgeMax = cmp.Or(p.HedgeMax, max(defaultHedgeMax, p.HedgeMin))
	p.SlowAfter = cmp.Or(p.SlowAfter, defaultSlowAfter)
	p.HandoffTimeout = cmp.Or(p.HandoffTimeout, defaultHandoff)
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

// peerHealth is what a group knows of one peer. Each part answers one
// question: breaker, is the peer ejected; bgProbe, may a background probe
// of the ejected peer start now; handoff, is the peer worth asking for
// keys it owned before the ring changed; batch, does it take batches.
type peerHealth struct {
	addr     string
	inFlight atomic.Int64 // fetches to it now, at most MaxInFlight

	mu      sync.Mutex // guards breaker and bgProbe: a probe is paced by the ejection
	breaker breaker
	bgProbe backgroundProbe

	handoff handoffWorth
	batch   batchSupport
}

// admission is what a peer's health allows for one fetch.
type admission uint8

const (
	admitOK admission = iota
	admitProbe
	admitEjected
	admitBusy
)

// fetchOutcome is how a fetch from a peer ended, for its health.
type fetchOutcome uint8

const (
	outcomeNone    fetchOutcome = iota // says nothing of the peer (the caller left)
	outcomeSuccess                     // a value or "not found"
	outcomeFailure                     // an error, a timeout, or too slow for the hedge
)

// breaker ejects a peer after EjectAfter consecutive failures, for a time
// that doubles with each ejection in a row. When that time is over, one
// fetch goes to the peer as a probe: success readmits the peer, failure
// ejects it again. A background probe that gets an answer readmits it too.
type breaker struct {
	failures  int64     // consecutive
	streak    int       // consecutive ejections, for the backoff
	ejections int64     // since the group was created
	ejectedAt time.Time // when the last ejection began
	until     time.Time // when it ends; zero when the peer is admitted
	probing   bool      // the fetch that may end the ejection is in flight
}

// ejected reports whether the peer is ejected at now, or its probe is in
// flight.
func (b *breaker) ejected(now time.Time) bool {
	return !b.until.IsZero() && (now.Before(b.until) || b.probing)
}

// admit says whether a fetch may go to the peer at now; at most one
// fetch is the probe.
func (b *breaker) admit(now time.Time) admission {
	switch {
	case b.until.IsZero():
		return admitOK
	case b.ejected(now):
		return admitEjected
	}
	b.probing = true
	return admitProbe
}

// done records a fetch's outcome; probe says whether the fetch was the
// probe admit let through. Only the probe ends or renews an ejection: a
// fetch that began before the peer was ejected and ends during it changes
// nothing but the count of failures. It reports whether the peer was
// ejected by it.
func (b *breaker) done(o fetchOutcome, probe bool, policy *PeerPolicy) (ejected bool) {
	if probe {
		b.probing = false
	}
	switch o {
	case outcomeSuccess:
		b.failures = 0
		if probe || b.until.IsZero() {
			b.streak, b.until = 0, time.Time{}
		}
	case outcomeFailure:
		b.failures++
		if probe || (b.until.IsZero() && b.failures >= int64(policy.EjectAfter)) {
			b.streak++
			b.ejections++
			b.ejectedAt = time.Now()
			b.until = b.ejectedAt.Add(policy.backoff(b.streak))
			return true
		}
	}
	return false
}

// readmit ends the ejection. The streak stays until a request succeeds
// (done): a peer that fails again is ejected for longer.
func (b *breaker) readmit() {
	b.failures, b.until = 0, time.Time{}
}

// backoff is the length of the streak-th ejection in a row: EjectFor
// doubled each time up to MaxEjectFor, plus up to 25% jitter.
func (p *PeerPolicy) backoff(streak int) time.Duration {
	d := p.EjectFor
	for i := 1; i < streak && d < p.MaxEjectFor; i++ {
		d *= 2
	}
	return jitter(min(d, p.MaxEjectFor))
}

// backgroundProbe paces the memory-only requests that ask an ejected peer
// whether it answers again (Group.probe, prevowner.go): at most one in
// flight, each after a wait as long as the ejection had lasted at the last
// probe (or at the ejection), at least an eighth of the ejection's length
// and at most EjectFor. So a peer back soon after a first ejection (a node
// restarted in place, whose port was closed for a moment) is readmitted
// within an eighth of EjectFor, not at the end of it; one down for long is
// asked once per EjectFor; and one that answers probes but fails requests
// (its streak stays) is readmitted less often each time.
type backgroundProbe struct {
	running bool
	last    time.Time // when the last one started
}

// start reports whether a probe of a peer ejected from ejectedAt to
// ejectedUntil may start at now, and records it as started if so.
func (p *backgroundProbe) start(now, ejectedAt, ejectedUntil time.Time, maxWait time.Duration) bool {
	last := p.last
	if last.Before(ejectedAt) {
		last = ejectedAt // the wait counts from the ejection, not from a probe before it
	}
	wait := min(max(last.Sub(ejectedAt), ejectedUntil.Sub(ejectedAt)/8), maxWait)
	if p.running || now.Sub(last) < wait {
		return false
	}
	p.running, p.last = true, now
	return true
}

// handoffWorth says whether a peer, as the previous owner of keys after a
// ring change, is worth asking for them: one that answered "not held" to
// every handoff since the change is asked less (prevowner.go).
type handoffWorth struct {
	mu        sync.Mutex
	cold      int       // handoffs it did not answer since coldRing
	warm      bool      // it has answered with a key since coldRing
	coldUntil time.Time // not asked for a handoff before then
	coldRing  time.Time // the ring change cold counts from
}

// batchSupport remembers that a peer answered that it cannot batch (an
// older version): its keys are asked key by key for noBatchFor, then a
// batch is tried again (batchfetch.go).
type batchSupport struct {
	retryAt atomic.Int64 // Unix nanoseconds
}

// supported reports whether a batch may be sent to the peer now.
func (b *batchSupport) supported() bool {
	return time.Now().UnixNano() >= b.retryAt.Load()
}

// refused records that the peer answered that it cannot batch.
func (b *batchSupport) refused() {
	b.retryAt.Store(time.Now().Add(noBatchFor).UnixNano())
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

// isEjected reports whether peer is ejected now (or its probe is in
// flight). It adds no state for a peer the group does not know (a key's
// next or previous owner it never fetched from), which is not ejected.
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
	return p.breaker.ejected(time.Now())
}

// startProbe reports whether a background probe of the ejected peer p may
// start now, and records it as started if so.
func (h *peerHealths) startProbe(p *peerHealth) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := &p.breaker
	return !b.until.IsZero() && p.bgProbe.start(time.Now(), b.ejectedAt, b.until, h.policy.EjectFor)
}

// endProbe records the end of a background probe: a peer that answered
// is readmitted, though a memory-only answer shows the peer up, not that
// it can load.
func (h *peerHealths) endProbe(p *peerHealth, alive bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bgProbe.running = false
	if alive {
		p.breaker.readmit()
	}
}

// admit decides whether a fetch may go to the peer, and counts it in
// flight if so (Group.settle undoes that).
func (h *peerHealths) admit(p *peerHealth) admission {
	p.mu.Lock()
	a := p.breaker.admit(time.Now())
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

// done records a fetch's outcome (breaker.done), after its in-flight
// slot is freed. It reports whether the peer was ejected by it.
func (h *peerHealths) done(p *peerHealth, o fetchOutcome, probe bool) (ejected bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.breaker.done(o, probe, &h.policy)
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
			Ejected:             p.breaker.ejected(now),
			ConsecutiveFailures: p.breaker.failures,
			Ejections:           p.breaker.ejections,
			InFlight:            p.inFlight.Load(),
		})
		p.mu.Unlock()
		return true
	})
	slices.SortFunc(out, func(a, b PeerStats) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}
