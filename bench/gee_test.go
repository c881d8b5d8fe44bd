package bench

import (
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Every GeeCache group and node of this module is made here, so that a
// change of the library's constructors or options touches this file only.

// newGeeGroup returns a group named name on a registry of its own, with
// no peers.
func newGeeGroup(tb testing.TB, name string, budget int64, g getter.Getter) *cache.Group {
	return newGeeGroupOn(tb, cache.NewRegistry(), name, budget, g, nil)
}

// newGeeGroupOn returns a group named name on reg; peers may be nil.
func newGeeGroupOn(tb testing.TB, reg *cache.Registry, name string, budget int64, g getter.Getter, peers cache.PeerPicker) *cache.Group {
	var opts []cache.Option
	if peers != nil {
		opts = append(opts, cache.WithPeers(peers))
	}
	grp, err := reg.NewGroup(name, budget, g, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return grp
}

// newGeeNode returns the nethttp Pool and the group of the node self of a
// cluster whose nodes are addrs (self among them). The Pool is the node's
// http.Handler; its clients use the library's default transport.
func newGeeNode(tb testing.TB, self string, addrs []string, name string, budget int64, g getter.Getter) (*nethttp.Pool, *cache.Group) {
	reg := cache.NewRegistry()
	pool := nethttp.NewPool(self, reg)
	grp := newGeeGroupOn(tb, reg, name, budget, g, pool)
	pool.Set(addrs...)
	return pool, grp
}
