package picker

import (
	"fmt"
	"testing"

	"github.com/geecache/geecache/cache"
)

// Ring lookups at 3, 10 and 100 nodes with the default replica count. Keys
// are prepared beforehand so that only the lookup is measured.
func BenchmarkLookup(b *testing.B) {
	keys := testKeys(4096)
	for _, h := range hashes {
		for _, n := range []int{3, 10, 100} {
			r := mustNew(nodeNames(n), &Options{Hash: h.h})
			b.Run(fmt.Sprintf("%s/nodes=%d", h.name, n), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					r.owner(keys[i&4095])
					i++
				}
			})
		}
	}
}

func BenchmarkPickPeer(b *testing.B) {
	keys := testKeys(4096)
	for _, n := range []int{3, 10, 100} {
		p := mustPeers("self", func(addr string) cache.Peer { return &addrGetter{addr: addr} }, nil)
		p.Set(nodeNames(n)...)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.PickPeer(keys[i&4095])
				i++
			}
		})
	}
}

// Building a ring happens on every membership change (Peers.Set).
func BenchmarkNew(b *testing.B) {
	for _, n := range []int{3, 10, 100} {
		nodes := nodeNames(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mustNew(nodes, nil)
			}
		})
	}
}

// Rebuilding the ring of a 1000-node cluster: from scratch (New, or a
// Peers' first Set), and after one node joins or leaves (ring.with and
// Peers.Set from the 1000-node ring). Run with -benchmem.
func BenchmarkRebuild(b *testing.B) {
	const n = 1000
	nodes := nodeNames(n)
	grown := append(nodeNames(n), "http://10.0.9.9:8001")
	base := mustNew(nodes, nil)
	big := mustNew(grown, nil)
	b.Run(fmt.Sprintf("new/nodes=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mustNew(nodes, nil)
		}
	})
	b.Run(fmt.Sprintf("add-one/nodes=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			base.with(grown...)
		}
	})
	b.Run(fmt.Sprintf("remove-one/nodes=%d", n+1), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			big.with(nodes...)
		}
	})
	newGetter := func(addr string) cache.Peer { return &addrGetter{addr: addr} }
	b.Run(fmt.Sprintf("peers-set-first/nodes=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mustPeers(nodes[0], newGetter, nil).Set(nodes...)
		}
	})
	b.Run(fmt.Sprintf("peers-set-add-or-remove-one/nodes=%d", n), func(b *testing.B) {
		p := mustPeers(nodes[0], newGetter, nil)
		p.Set(nodes...)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i%2 == 0 {
				p.Set(grown...)
			} else {
				p.Set(nodes...)
			}
			i++
		}
	})
}
