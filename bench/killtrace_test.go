package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
)

// What the kill of killOwner observes key by key (kill_test.go): while a
// watch is on, every node's Tracer and the source record, for the watched
// keys (the dead owner's), each Get a client sent and whether it hit, each
// peer's request a node answered from memory or not, each fetch from a
// peer, and each load with the node that made it and the step it was made
// in ("load": the owner, or the next node for a dead owner; "fallback": a
// hedge beside a slow fetch, or a local load for a busy or failed peer).

// The kinds of an mbEvent.
const (
	evLoad       uint8 = iota // the source called in a "load" step
	evFallback                // the source called in a "fallback" step
	evClientHit               // a client's Get answered from the node's memory
	evClientMiss              // a client's Get that missed the node's memory
	evServeHit                // a peer's request answered from memory
	evServeMiss               // a peer's request that missed it
	evPeer                    // a fetch from a peer (peer: which)
)

// An mbEvent is one thing a node did for a watched key.
type mbEvent struct {
	at   int64 // Unix ns
	id   int32
	node int16 // mbNode.serial
	peer int16 // evPeer: the peer's serial, else -1
	kind uint8
}

// mbWatch is the cluster's record of watched keys.
type mbWatch struct {
	on     atomic.Bool
	keys   atomic.Pointer[[]bool]           // by key id
	serial atomic.Pointer[map[string]int16] // node serial by address
	mu     sync.Mutex
	events []mbEvent
}

// mbClientKey marks the context of a client's Get (not a peer's request).
type mbClientKey struct{}

// mbStepKey carries the load step ("load", "fallback") to the source.
type mbStepKey struct{}

// watch starts recording the events of keys.
func (w *mbWatch) watch(keys []bool) {
	w.keys.Store(&keys)
	w.on.Store(true)
}

// stop stops recording and returns the events in time order.
func (w *mbWatch) stop() []mbEvent {
	w.on.Store(false)
	w.mu.Lock()
	ev := w.events
	w.events = nil
	w.mu.Unlock()
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].at < ev[j].at })
	return ev
}

// watched returns key's id if it is watched now.
func (w *mbWatch) watched(key string) (int, bool) {
	if w == nil || !w.on.Load() {
		return 0, false
	}
	id, ok := mbKeyID(key)
	ks := w.keys.Load()
	if !ok || ks == nil || id >= len(*ks) || !(*ks)[id] {
		return 0, false
	}
	return id, true
}

func (w *mbWatch) add(e mbEvent) {
	w.mu.Lock()
	w.events = append(w.events, e)
	w.mu.Unlock()
}

// setSerial records that addr is node serial now.
func (w *mbWatch) setSerial(addr string, serial int16) {
	m := map[string]int16{}
	if p := w.serial.Load(); p != nil {
		for k, v := range *p {
			m[k] = v
		}
	}
	m[addr] = serial
	w.serial.Store(&m)
}

func (w *mbWatch) serialOf(addr string) int16 {
	if p := w.serial.Load(); p != nil {
		if s, ok := (*p)[addr]; ok {
			return s
		}
	}
	return -1
}

// mbKeyID parses "k%06d" without allocating.
func mbKeyID(key string) (int, bool) {
	if len(key) != 7 || key[0] != 'k' {
		return 0, false
	}
	id := 0
	for _, c := range key[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		id = id*10 + int(c-'0')
	}
	return id, true
}

// mbTracer is one node's Tracer for the watch.
type mbTracer struct {
	w    *mbWatch
	node int16
}

type mbNoSpan struct{}

func (mbNoSpan) End(error) {}

func (t *mbTracer) Start(ctx context.Context, step, _, key, peer string) (context.Context, cache.Span) {
	id, ok := t.w.watched(key)
	if !ok {
		return ctx, mbNoSpan{}
	}
	e := mbEvent{at: time.Now().UnixNano(), id: int32(id), node: t.node, peer: -1}
	client := ctx.Value(mbClientKey{}) != nil
	switch step {
	case "hit":
		e.kind = evServeHit
		if client {
			e.kind = evClientHit
		}
	case "miss":
		e.kind = evServeMiss
		if client {
			e.kind = evClientMiss
		}
	case "peer":
		e.kind, e.peer = evPeer, t.w.serialOf(peer)
	case "load", "fallback":
		return context.WithValue(ctx, mbStepKey{}, step), mbNoSpan{} // the source records it
	default:
		return ctx, mbNoSpan{}
	}
	t.w.add(e)
	return ctx, mbNoSpan{}
}

// heldAt reports, for each id, whether n holds the key in memory, as its
// peers' memory-only requests see it (PROTOCOL.md, "Handoff"): its own
// keys are held in its main cache. It asks n's handler in-process, so it
// works on a node whose server is closed.
func heldAt(n *mbNode, ids []int) []bool {
	out := make([]bool, len(ids))
	for i, id := range ids {
		req := httptest.NewRequest(http.MethodGet, "/_geecache/"+mbGroup+"/"+mbKey(id), nil)
		req.Header.Set("X-Geecache-Peer", "memory")
		rec := httptest.NewRecorder()
		n.pool.ServeHTTP(rec, req)
		out[i] = rec.Code == http.StatusOK
	}
	return out
}

// TestClassifyLoads checks the classes of classify on one key's events:
// the dead owner's load at the kill, a hedge, a second node's load, the
// next node's first load, one within its flight's time, one after a hit
// there, and one without.
func TestClassifyLoads(t *testing.T) {
	const victim, home, other = 0, 1, 2
	ms := int64(time.Millisecond)
	evs := []mbEvent{
		{at: 0, node: victim, kind: evLoad},
		{at: 1 * ms, node: other, kind: evFallback},
		{at: 2 * ms, node: other, kind: evLoad},
		{at: 10 * ms, node: home, kind: evLoad},
		{at: 11 * ms, node: home, kind: evLoad},
		{at: 20 * ms, node: other, kind: evClientHit}, // not home: says nothing of home's memory
		{at: 30 * ms, node: home, kind: evLoad},
		{at: 40 * ms, node: home, kind: evServeHit},
		{at: 50 * ms, node: home, kind: evLoad},
	}
	var gaps []int64
	got := classify(evs, home, victim, true, &gaps)
	want := [nClasses]int{clVictim: 1, clFallback: 1, clOther: 1, clFirst: 1, clOverlap: 1, clNoUse: 1, clAfterUse: 1}
	if got != want {
		t.Errorf("kill: classify = %v, want %v", got, want)
	}
	// The control: the owner (victim) is home, its loads are its own.
	if len(gaps) != 1 || gaps[0] != 19*ms {
		t.Errorf("kill: gaps %v, want [19ms]", gaps)
	}
	got = classify(evs[:1], victim, victim, false, nil)
	if want := [nClasses]int{clFirst: 1}; got != want {
		t.Errorf("control: classify = %v, want %v", got, want)
	}
	if id, ok := mbKeyID(mbKey(12345)); !ok || id != 12345 {
		t.Errorf("mbKeyID(%q) = %d, %v", mbKey(12345), id, ok)
	}
	for _, k := range []string{"k12345", "x012345", "k01234a", "k0123456"} {
		if _, ok := mbKeyID(k); ok {
			t.Errorf("mbKeyID(%q) ok, want not", k)
		}
	}
}
