package otel

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/geecache/geecache/cache"
)

// Attribute keys on GeeCache's metrics and spans (RegisterMetrics's and
// NewTracer's docs state them).
const (
	// groupKey names the group (all metrics and spans).
	groupKey = attribute.Key("geecache.group")
	// cacheKey names one of a group's two caches: "main" (keys this node
	// owns) or "hot" (keys fetched from their owners).
	cacheKey = attribute.Key("geecache.cache")
)

// MetricsOptions configures RegisterMetrics. A nil *MetricsOptions means
// all defaults.
type MetricsOptions struct {
	// Attributes are added to every measurement, after geecache.group
	// and geecache.cache: a node's name, say, when several nodes share
	// one MeterProvider. Nil (the default) adds none. The slice is copied.
	Attributes []attribute.KeyValue
}

// RegisterMetrics publishes the counters of every group of reg, including
// groups created after the call, as asynchronous instruments of meter.
// Each collection reads each group's Stats once. Every measurement has the
// attribute geecache.group; those of a single cache also have
// geecache.cache ("main" or "hot"). The instruments, named after
// the fields of cache.Stats:
//
//	geecache.gets              counter        {get}      Gets
//	geecache.hits              counter        {hit}      Main.Hits, Hot.Hits (by geecache.cache)
//	geecache.peer.requests     counter        {request}  PeerRequests
//	geecache.peer.loads        counter        {load}     PeerLoads
//	geecache.peer.errors       counter        {error}    PeerErrors
//	geecache.fallback.loads    counter        {load}     FallbackLoads
//	geecache.abandoned.loads   counter        {load}     Abandoned
//	geecache.local.loads       counter        {load}     LocalLoads
//	geecache.load.errors       counter        {error}    LoadErrors
//	geecache.dedup.waits       counter        {get}      DedupWaits
//	geecache.hedges            counter        {load}     Hedges
//	geecache.hedge.wins        counter        {load}     HedgeWins
//	geecache.ejected.loads     counter        {load}     EjectedLoads
//	geecache.next.peer         counter        {load}     NextPeer
//	geecache.handoffs          counter        {key}      Handoffs
//	geecache.handoff.misses    counter        {request}  HandoffMisses
//	geecache.handoff.served    counter        {request}  HandoffServed
//	geecache.offered           counter        {key}      Offered
//	geecache.taken.over        counter        {key}      TakenOver
//	geecache.peer.busy         counter        {load}     PeerBusy
//	geecache.stale.serves      counter        {get}      StaleServes
//	geecache.refreshes         counter        {load}     Refreshes
//	geecache.refresh.failures  counter        {error}    RefreshFails
//	geecache.peer.ejected      up-down        {peer}     Peers[i].Ejected as 0 or 1 (by geecache.peer)
//	geecache.peer.ejections    counter        {ejection} Peers[i].Ejections (by geecache.peer)
//	geecache.peer.inflight     up-down        {request}  Peers[i].InFlight (by geecache.peer)
//	geecache.cache.size        up-down        By         Main.Bytes, Hot.Bytes
//	geecache.cache.items       up-down        {item}     Main.Items, Hot.Items
//	geecache.cache.evictions   counter        {eviction} Main.Evictions, Hot.Evictions
//
// geecache.gets counts this node's callers' Gets only; the requests it
// served for peers are geecache.peer.requests and geecache.handoff.served,
// and geecache.hits counts the lookups of all three that memory answered.
// The sum of geecache.hits over both caches is Stats.Hits. Unregister the
// returned Registration to stop the publishing. RegisterMetrics returns an
// error wrapping cache.ErrConfig for a nil meter or registry, and the
// meter's error if it cannot create an instrument.
func RegisterMetrics(meter metric.Meter, reg *cache.Registry, opts *MetricsOptions) (metric.Registration, error) {
	if meter == nil {
		return nil, fmt.Errorf("geecache: %w: RegisterMetrics needs a Meter", cache.ErrConfig)
	}
	if reg == nil {
		return nil, fmt.Errorf("geecache: %w: RegisterMetrics needs a Registry", cache.ErrConfig)
	}
	var o MetricsOptions
	if opts != nil {
		o = *opts
	}
	m := &metrics{reg: reg, extra: slices.Clone(o.Attributes), sets: make(map[*cache.Group]*groupSets)}
	b := builder{meter: meter}
	m.gets = b.counter("geecache.gets", "{get}", "Gets of this node's callers (peers' requests are geecache.peer.requests).")
	m.hits = b.counter("geecache.hits", "{hit}", "Lookups answered from memory (callers' Gets and peers' requests), by cache.")
	m.peerRequests = b.counter("geecache.peer.requests", "{request}", "Requests served for peers (their OpGets, key by key).")
	m.peerLoads = b.counter("geecache.peer.loads", "{load}", "Values, or not-found answers, fetched from owner peers.")
	m.peerErrors = b.counter("geecache.peer.errors", "{error}", "Owner peers that failed to answer.")
	m.fallbacks = b.counter("geecache.fallback.loads", "{load}", "Local loads after an owner peer failed.")
	m.abandoned = b.counter("geecache.abandoned.loads", "{load}", "Loads stopped because every caller had left.")
	m.localLoads = b.counter("geecache.local.loads", "{load}", "Calls of the group's Getter.")
	m.loadErrors = b.counter("geecache.load.errors", "{error}", "Getter calls that failed, other than not found or cancelled.")
	m.dedupWaits = b.counter("geecache.dedup.waits", "{get}", "Gets that shared a load another Get started.")
	m.hedges = b.counter("geecache.hedges", "{load}", "Local loads started beside a slow fetch from the owner.")
	m.hedgeWins = b.counter("geecache.hedge.wins", "{load}", "Hedges whose local load answered first.")
	m.ejectedLoads = b.counter("geecache.ejected.loads", "{load}", "Local loads because the owner peer was ejected.")
	m.nextPeer = b.counter("geecache.next.peer", "{load}", "Keys fetched from the next node on the ring because the owner was ejected or failed.")
	m.handoffs = b.counter("geecache.handoffs", "{key}", "Keys this node owns that their previous owner answered from memory.")
	m.handoffMisses = b.counter("geecache.handoff.misses", "{request}", "Previous owners asked that did not hold the key, or did not answer in time.")
	m.handoffServed = b.counter("geecache.handoff.served", "{request}", "Memory-only requests served for peers: a key's new owner asking this node.")
	m.offered = b.counter("geecache.offered", "{key}", "Keys offered to their new owners after a change of the ring, or on leaving.")
	m.takenOver = b.counter("geecache.taken.over", "{key}", "Offered keys this node took from their previous owner's memory.")
	m.peerBusy = b.counter("geecache.peer.busy", "{load}", "Local loads because the owner peer had too many requests in flight.")
	m.staleServes = b.counter("geecache.stale.serves", "{get}", "Gets answered with a stale value while it is refreshed.")
	m.refreshes = b.counter("geecache.refreshes", "{load}", "Background refreshes of stale values started.")
	m.refreshFails = b.counter("geecache.refresh.failures", "{error}", "Background refreshes that failed.")
	m.peerEjected = b.upDown("geecache.peer.ejected", "{peer}", "1 while the peer is ejected, else 0, by peer.")
	m.peerEjections = b.counter("geecache.peer.ejections", "{ejection}", "Times the peer was ejected, by peer.")
	m.peerInFlight = b.upDown("geecache.peer.inflight", "{request}", "Requests in flight to the peer, by peer.")
	m.size = b.upDown("geecache.cache.size", "By", "Bytes of keys and values held, by cache.")
	m.items = b.upDown("geecache.cache.items", "{item}", "Entries held, by cache.")
	m.evictions = b.counter("geecache.cache.evictions", "{eviction}", "Entries evicted, by cache.")
	if b.err != nil {
		return nil, b.err
	}
	r, err := meter.RegisterCallback(m.observe, b.all...)
	if err != nil {
		return nil, fmt.Errorf("geecache: registering the metrics callback: %w", err)
	}
	return r, nil
}

// builder creates instruments, keeping the first error.
type builder struct {
	meter metric.Meter
	all   []metric.Observable
	err   error
}

func (b *builder) counter(name, unit, desc string) metric.Int64ObservableCounter {
	c, err := b.meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.add(name, c, err)
	return c
}

func (b *builder) upDown(name, unit, desc string) metric.Int64ObservableUpDownCounter {
	c, err := b.meter.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.add(name, c, err)
	return c
}

func (b *builder) add(name string, o metric.Observable, err error) {
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("geecache: instrument %s: %w", name, err)
	}
	b.all = append(b.all, o)
}

// metrics is the state of one RegisterMetrics call.
type metrics struct {
	reg   *cache.Registry
	extra []attribute.KeyValue

	gets, hits, peerRequests, peerLoads, peerErrors, fallbacks, abandoned,
	localLoads, loadErrors, dedupWaits, evictions, hedges, hedgeWins, ejectedLoads,
	peerBusy, peerEjections, staleServes, refreshes, refreshFails,
	nextPeer, handoffs, handoffMisses, handoffServed, offered, takenOver metric.Int64ObservableCounter
	size, items, peerEjected, peerInFlight metric.Int64ObservableUpDownCounter

	mu   sync.Mutex // guards sets; a reader may collect concurrently
	sets map[*cache.Group]*groupSets
}

// groupSets are the attribute sets of one group's measurements, built once.
type groupSets struct {
	group, main, hot metric.MeasurementOption
}

func (m *metrics) setsOf(g *cache.Group) *groupSets {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sets[g]; ok {
		return s
	}
	with := func(kv ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append(kv, m.extra...)...))
	}
	name := groupKey.String(g.Name())
	s := &groupSets{
		group: with(name),
		main:  with(name, cacheKey.String("main")),
		hot:   with(name, cacheKey.String("hot")),
	}
	m.sets[g] = s
	return s
}

// observe is the callback: one Stats call per group.
func (m *metrics) observe(_ context.Context, o metric.Observer) error {
	for _, name := range m.reg.Names() {
		g := m.reg.Lookup(name)
		if g == nil {
			continue
		}
		st := g.Stats()
		a := m.setsOf(g)
		o.ObserveInt64(m.gets, st.Gets, a.group)
		o.ObserveInt64(m.peerRequests, st.PeerRequests, a.group)
		o.ObserveInt64(m.peerLoads, st.PeerLoads, a.group)
		o.ObserveInt64(m.peerErrors, st.PeerErrors, a.group)
		o.ObserveInt64(m.fallbacks, st.FallbackLoads, a.group)
		o.ObserveInt64(m.abandoned, st.Abandoned, a.group)
		o.ObserveInt64(m.localLoads, st.LocalLoads, a.group)
		o.ObserveInt64(m.loadErrors, st.LoadErrors, a.group)
		o.ObserveInt64(m.dedupWaits, st.DedupWaits, a.group)
		o.ObserveInt64(m.hedges, st.Hedges, a.group)
		o.ObserveInt64(m.hedgeWins, st.HedgeWins, a.group)
		o.ObserveInt64(m.ejectedLoads, st.EjectedLoads, a.group)
		o.ObserveInt64(m.nextPeer, st.NextPeer, a.group)
		o.ObserveInt64(m.handoffs, st.Handoffs, a.group)
		o.ObserveInt64(m.handoffMisses, st.HandoffMisses, a.group)
		o.ObserveInt64(m.handoffServed, st.HandoffServed, a.group)
		o.ObserveInt64(m.offered, st.Offered, a.group)
		o.ObserveInt64(m.takenOver, st.TakenOver, a.group)
		o.ObserveInt64(m.peerBusy, st.PeerBusy, a.group)
		o.ObserveInt64(m.staleServes, st.StaleServes, a.group)
		o.ObserveInt64(m.refreshes, st.Refreshes, a.group)
		o.ObserveInt64(m.refreshFails, st.RefreshFails, a.group)
		for _, p := range st.Peers {
			set := metric.WithAttributeSet(attribute.NewSet(append([]attribute.KeyValue{groupKey.String(name), peerKey.String(p.Addr)}, m.extra...)...))
			ejected := int64(0)
			if p.Ejected {
				ejected = 1
			}
			o.ObserveInt64(m.peerEjected, ejected, set)
			o.ObserveInt64(m.peerEjections, p.Ejections, set)
			o.ObserveInt64(m.peerInFlight, p.InFlight, set)
		}
		for _, c := range [2]struct {
			s   cache.CacheStats
			set metric.MeasurementOption
		}{{st.Main, a.main}, {st.Hot, a.hot}} {
			o.ObserveInt64(m.hits, c.s.Hits, c.set)
			o.ObserveInt64(m.size, c.s.Bytes, c.set)
			o.ObserveInt64(m.items, c.s.Items, c.set)
			o.ObserveInt64(m.evictions, c.s.Evictions, c.set)
		}
	}
	return nil
}
