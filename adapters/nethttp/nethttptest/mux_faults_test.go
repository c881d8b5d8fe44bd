//go:build !js

package nethttptest_test

import (
	"fmt"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
)

// A fault holds for a cluster whose nodes multiplex their requests
// (PoolOptions.Multiplex) as for one over HTTP/1.1, also when it is set
// after the nodes have opened their multiplexed connections: a lying or
// partitioned owner's keys are loaded by the node that asks.
func TestFaultsWithMultiplex(t *testing.T) {
	for _, f := range []nethttptest.Fault{{Lie: true}, {Partitioned: true}} {
		t.Run(fmt.Sprintf("%+v", f), func(t *testing.T) {
			nodes := nethttptest.Start(t, 2, &nethttptest.Options{
				GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}},
				PoolOptions:  nethttp.PoolOptions{Multiplex: true}})
			a, b := nodes[0], nodes[1]
			mustGet(t, a.Group, keyOf(t, b, "warm")) // the connection a -> b is open
			if s := a.Group.Stats(); s.PeerLoads != 1 {
				t.Fatalf("a's stats: %+v; want one peer load", s)
			}
			b.SetFault(f)
			mustGet(t, a.Group, keyOf(t, b, "faulty"))
			if s := a.Group.Stats(); s.FallbackLoads != 1 || s.PeerLoads != 1 {
				t.Fatalf("a's stats after the fault: %d fallbacks, %d peer loads; want the fault to hold: 1 and 1",
					s.FallbackLoads, s.PeerLoads)
			}
		})
	}
}
