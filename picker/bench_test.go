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
					r.Lookup(keys[i&4095])
					i++
				}
			})
		}
	}
}

func BenchmarkPickPeer(b *testing.B) {
	keys := testKeys(4096)
	for _, n := range []int{3, 10, 100} {
		p := mustPeers("self", func(addr string) cache.PeerGetter { return &addrGetter{addr} }, nil)
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
