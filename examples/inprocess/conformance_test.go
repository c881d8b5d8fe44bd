package main

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/cache/cachetest"
	"github.com/geecache/geecache/picker"
)

// inMemoryPeer, a transport written against the public API alone, keeps
// the promises the conformance kit checks.
func TestConformance(t *testing.T) {
	cachetest.TestTransport(t, func(t *testing.T, o cachetest.Options) cachetest.Cluster {
		names := make([]string, o.Nodes)
		regs := map[string]*cache.Registry{}
		for i := range names {
			names[i] = fmt.Sprint("node", i)
			regs[names[i]] = cache.NewRegistry()
		}
		quiet := slog.New(slog.DiscardHandler)
		// ServePeer is called with the asking group's own PeerReply: an
		// owner's Loading reaches it directly.
		c := cachetest.Cluster{SaysLoading: true}
		for i, name := range names {
			peers, err := picker.NewPeers(name, func(addr string) cache.Peer {
				return inMemoryPeer{addr: addr, target: regs[addr]}
			}, &picker.Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if err := peers.Set(names...); err != nil {
				t.Fatal(err)
			}
			opts := o.GroupOptions
			opts.Peers, opts.Logger = peers, quiet
			g, err := regs[name].NewGroup(o.Group, 1<<20, o.Getter(i), &opts)
			if err != nil {
				t.Fatal(err)
			}
			c.Groups = append(c.Groups, g)
			c.Pickers = append(c.Pickers, peers)
		}
		return c
	})
}
