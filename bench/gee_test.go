package bench

import (
	"log/slog"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Every GeeCache group and node of this module is made here, so that a
// change of the library's constructors or options touches this file only.

// quietLog returns a logger that discards the library's logs, which would
// otherwise mix with the benchmark output.
func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newGeeGroup returns a group named name on a registry of its own, with
// no peers.
func newGeeGroup(tb testing.TB, name string, budget int64, g getter.Getter) *cache.Group {
	return newGeeGroupOn(tb, cache.NewRegistry(), name, budget, g, nil)
}

// newGeeGroupOn returns a group named name on reg; peers may be nil.
//
// Every default is on, hedging included, so that the remote path is
// measured as users get it. A hedge starts only after the owner has been
// silent for the hedge delay (10 ms at least), far above a loopback fetch;
// the remote benchmarks report the hedges they saw (hedges/1k-req) and the
// tests check that every remote key was fetched from its owner.
func newGeeGroupOn(tb testing.TB, reg *cache.Registry, name string, budget int64, g getter.Getter, peers cache.PeerPicker) *cache.Group {
	grp, err := reg.NewGroup(name, budget, g, &cache.GroupOptions{
		Peers:  peers,
		Logger: quietLog(),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return grp
}

// newGeeNode returns the nethttp Pool, the registry and the group of the
// node self of a cluster whose nodes are addrs (self among them), signing
// with secret if it is not nil. The Pool is the node's http.Handler; its
// clients share the library's default transport. The registry is how a
// benchmark acts on this node alone, as a peer's request would.
func newGeeNode(tb testing.TB, self string, addrs []string, name string, budget int64, g getter.Getter, secret []byte) (*nethttp.Pool, *cache.Registry, *cache.Group) {
	return newGeeNodeOpts(tb, self, addrs, name, budget, g, &nethttp.PoolOptions{Logger: quietLog(), Cluster: nethttp.Cluster{Secret: secret}})
}

// newGeeNodeOpts is newGeeNode with the Pool's options.
func newGeeNodeOpts(tb testing.TB, self string, addrs []string, name string, budget int64, g getter.Getter, opts *nethttp.PoolOptions) (*nethttp.Pool, *cache.Registry, *cache.Group) {
	reg := cache.NewRegistry()
	pool, err := nethttp.NewPool(self, reg, opts)
	if err != nil {
		tb.Fatal(err)
	}
	grp := newGeeGroupOn(tb, reg, name, budget, g, pool)
	if err := pool.Set(addrs...); err != nil {
		tb.Fatal(err)
	}
	return pool, reg, grp
}
