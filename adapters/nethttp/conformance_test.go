//go:build !js && !wasip1

package nethttp_test

import (
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache/cachetest"
)

// The net/http binding keeps every promise the conformance kit checks,
// over HTTP/1.1 and multiplexed, with a cluster secret (whose checksums
// refuse a lying node's answers).
func TestConformance(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "multiplexed"}[mux], func(t *testing.T) {
			cachetest.TestTransport(t, func(t *testing.T, o cachetest.Options) cachetest.Cluster {
				nodes := nethttptest.Start(t, o.Nodes, &nethttptest.Options{
					Group: o.Group, Getter: o.Getter, GroupOptions: o.GroupOptions,
					PoolOptions: nethttp.PoolOptions{Multiplex: mux, Cluster: nethttp.Cluster{Secret: []byte("conformance")}},
				})
				c := cachetest.Cluster{SaysLoading: true, Lie: func(i int) func() {
					// Multiplexed too: while a node has a fault, the
					// nodes ask each other over HTTP/1.1, where it lies.
					nodes[i].SetFault(nethttptest.Fault{Lie: true})
					return func() { nodes[i].SetFault(nethttptest.Fault{}) }
				}}
				if !mux {
					// Multiplexed, nethttptest's faults close every node's
					// Pool to end its connections (see TestHistoryOverHTTP's
					// -history.muxhang): the hung-node checks run over HTTP/1.1.
					c.Hang = func(i int) func() {
						nodes[i].SetFault(nethttptest.Fault{Hang: true})
						return func() { nodes[i].SetFault(nethttptest.Fault{}) }
					}
				}
				for _, n := range nodes {
					c.Groups = append(c.Groups, n.Group)
					c.Pickers = append(c.Pickers, n.Pool)
				}
				return c
			})
		})
	}
}
