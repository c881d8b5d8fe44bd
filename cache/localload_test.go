package cache_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The tests in this file are about what a local load costs: the ring's
// questions it asks and the allocations of its context.

// countingRouter is a peer set that owns no key but this node's and
// counts the questions a group asks it.
type countingRouter struct{ picks, fallbacks atomic.Int64 }

func (r *countingRouter) PickPeer(string) (cache.Peer, bool) {
	r.picks.Add(1)
	return nil, false
}

func (r *countingRouter) PickFallback(string, func(cache.Peer) bool) (next, previous cache.Peer, changed time.Time) {
	r.fallbacks.Add(1)
	return nil, nil, time.Time{}
}

// countingPicker is countingRouter without PickFallback: a peer set that
// names no next or previous owners.
type countingPicker struct{ r countingRouter }

func (p *countingPicker) PickPeer(key string) (cache.Peer, bool) { return p.r.PickPeer(key) }

// A local load asks the peer set who owns its key once (the group's
// answer goes with the load, for the credit a key taken over gets), and
// for the key's previous owner once (for a handoff), whether a Get or a
// peer's OpGet (ServePeer) asked.
func TestLocalLoadAsksTheRingOnce(t *testing.T) {
	src := getter.Map(map[string]string{"a": "1"})
	for _, tc := range []struct {
		name             string
		local            bool
		picks, fallbacks int64
	}{
		{name: "Get, router", local: false, picks: 1, fallbacks: 1},
		{name: "OpGet, router", local: true, picks: 1, fallbacks: 1},
		{name: "Get, plain picker", local: false, picks: 1},
		{name: "OpGet, plain picker", local: true, picks: 1},
	} {
		r := &countingRouter{}
		var peers cache.PeerPicker = r
		if strings.HasSuffix(tc.name, "plain picker") {
			p := &countingPicker{}
			peers, r = p, &p.r
		}
		reg := cache.NewRegistry()
		g, err := reg.NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: peers, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"a", "missing"} {
			before, beforeFb := r.picks.Load(), r.fallbacks.Load()
			var err error
			if tc.local {
				_, _, err = serveKey(context.Background(), reg, g, cache.OpGet, key)
			} else {
				_, err = g.Get(context.Background(), key)
			}
			if (key == "a") != (err == nil) {
				t.Fatalf("%s(%s): %v", tc.name, key, err)
			}
			if picks, fb := r.picks.Load()-before, r.fallbacks.Load()-beforeFb; picks != tc.picks || fb != tc.fallbacks {
				t.Errorf("%s: a local load of %s asked PickPeer %d times and PickFallback %d; want %d and %d",
					tc.name, key, picks, fb, tc.picks, tc.fallbacks)
			}
		}
	}
}

// A Getter that reads a value from its context (a trace id, a logger) on
// a worker (a Get whose context can be cancelled, or a peer's OpGet)
// costs no allocation for it: the load's context answers from the first
// caller's context without making a context of its own.
func TestWorkerLoadContextValueAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation figures are not asserted under the race detector")
	}
	type traceKey struct{}
	ctx := context.WithValue(t.Context(), traceKey{}, "trace-1")
	value := make([]byte, 64)
	allocs := func(name string, reads, local bool) float64 {
		src := getter.Func(func(ctx context.Context, _ string) ([]byte, error) {
			if reads && ctx.Value(traceKey{}) != "trace-1" {
				return nil, errors.New("the load's context lost the caller's value")
			}
			return value, nil
		})
		reg := cache.NewRegistry()
		g, err := reg.NewGroup("g", 32<<20, src, &cache.GroupOptions{Peers: &countingRouter{}, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 201)
		for i := range keys {
			keys[i] = name + strconv.Itoa(i)
		}
		i := 0
		n := testing.AllocsPerRun(len(keys)-1, func() {
			k := keys[i]
			i++
			var v cache.ByteView
			var err error
			if local {
				v, _, err = serveKey(ctx, reg, g, cache.OpGet, k)
			} else {
				v, err = g.Get(ctx, k)
			}
			if err != nil || v.Len() != 64 {
				t.Fatalf("%s: %d bytes, %v", name, v.Len(), err)
			}
		})
		t.Logf("%s, OpGet %v: %.1f allocations per miss", name, local, n)
		return n
	}
	for _, local := range []bool{false, true} {
		plain, reading := allocs("plain", false, local), allocs("reading", true, local)
		if reading > plain {
			t.Errorf("OpGet %v: a miss whose Getter reads a context value makes %.1f allocations, one whose Getter does not %.1f; want no more",
				local, reading, plain)
		}
	}
}
