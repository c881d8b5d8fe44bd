package cache_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A source outage on a cluster (docs/configuration.md, "Stale",
// PROTOCOL.md's X-Geecache-Ttl): the owner serves its stale value to the
// nodes that ask, with a lifetime of 1 ms, and they hand it to their
// callers without keeping a copy that could outlive the owner's window.
// Their Gets all reach the owner, whose refresh is still tried at most
// once a second: 10 s of Gets every 10 ms from the other node call the
// source about 10 times, not 1,000. Once the owner's window ends both
// nodes show the failure, even the one that got a stale answer just before.
func TestStaleValueOverPeersDuringAnOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var down atomic.Bool
		var calls atomic.Int64
		nodes := []*memNode{{name: "node0"}, {name: "node1"}}
		for i, n := range nodes {
			src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
				calls.Add(1)
				if down.Load() {
					return nil, errors.New("source down")
				}
				return []byte("v:" + key), nil
			})
			n.reg = cache.NewRegistry()
			g, err := n.reg.NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: memPicker{i, nodes}, Logger: quiet,
				TTL: time.Minute, StaleWhileRevalidate: time.Minute, PeerPolicy: cache.PeerPolicy{NoHedge: true}})
			if err != nil {
				t.Fatal(err)
			}
			n.group = g
		}
		defer settleBubble()
		const key = "a-key" // node0's
		start := time.Now()
		mustGet(t, nodes[1].group, key, "v:"+key)
		down.Store(true)
		time.Sleep(61 * time.Second) // past the TTL, within the window
		before := calls.Load()
		for range 1000 {
			mustGet(t, nodes[1].group, key, "v:"+key)
			time.Sleep(10 * time.Millisecond)
		}
		synctest.Wait()
		s0, s1 := nodes[0].group.Stats(), nodes[1].group.Stats()
		if n := calls.Load() - before; n < 5 || n > 11 {
			t.Fatalf("10 s of stale Gets through a peer called the source %d times; want about one a second", n)
		}
		if s1.PeerLoads-1 != 1000 || s0.StaleServes != 1000 {
			t.Fatalf("node1: %d peer loads; node0: %d stale serves; want each of node1's 1000 Gets served stale by the owner, no copy kept",
				s1.PeerLoads-1, s0.StaleServes)
		}
		// A last stale answer just before the owner's window ends, then
		// just after: node1 must not serve a copy of its own.
		time.Sleep(time.Until(start.Add(119 * time.Second)))
		mustGet(t, nodes[1].group, key, "v:"+key)
		time.Sleep(2 * time.Second)
		for i, n := range nodes {
			if v, err := n.group.Get(t.Context(), key); err == nil {
				t.Fatalf("node%d: past the stale window Get = %q; want the source's failure", i, v)
			}
		}
	})
}
