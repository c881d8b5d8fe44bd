package cache_test

import (
	"fmt"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/cache/cachetest"
	"github.com/geecache/geecache/picker"
)

// The in-process transport of these tests (hPeer: each request calls the
// other node's group, as a transport's server does) keeps every promise
// the conformance kit checks.
func TestConformanceInProcess(t *testing.T) {
	cachetest.TestTransport(t, func(t *testing.T, o cachetest.Options) cachetest.Cluster {
		nodes := make([]*hNode, o.Nodes)
		addrs := make([]string, o.Nodes)
		for i := range nodes {
			addrs[i] = fmt.Sprint("node", i)
			nodes[i] = &hNode{addr: addrs[i]}
		}
		c := cachetest.Cluster{SaysLoading: true, Hang: func(i int) func() {
			nodes[i].hang()
			return nodes[i].resume
		}}
		for i, n := range nodes {
			p, err := picker.NewPeers(n.addr, func(a string) cache.Peer {
				for _, m := range nodes {
					if m.addr == a {
						return hPeer{m}
					}
				}
				return nil
			}, &picker.Options{Handoff: true, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Set(addrs...); err != nil {
				t.Fatal(err)
			}
			n.peers = p
			gopts := o.GroupOptions
			gopts.Peers, gopts.Logger = p, quiet
			reg := cache.NewRegistry()
			g, err := reg.NewGroup(o.Group, 1<<20, o.Getter(i), &gopts)
			if err != nil {
				t.Fatal(err)
			}
			n.reg.Store(reg)
			n.group.Store(g)
			c.Groups = append(c.Groups, g)
			c.Pickers = append(c.Pickers, p)
		}
		t.Cleanup(func() {
			for _, n := range nodes {
				n.resume()
			}
		})
		return c
	})
}
