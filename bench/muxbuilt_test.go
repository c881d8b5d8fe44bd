package bench

import (
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/getter"
)

// geecache-multiplex: the nethttp binding's own multiplexed option
// (PoolOptions.Multiplex), as a user turns it on: every node's Pool with
// Multiplex, served by nethttp.NewServer, the default transport as the
// fallback. The frames reach the Pool's handler inside the Pool, so the
// servers' HTTP counters see only the upgrades: the requests served are
// counted by the owners' groups (Stats.PeerRequests, one per key of a peer's Get).

// newOurMultiplexCluster is newOurClusterProto's cluster over HTTP/1.1
// with PoolOptions.Multiplex on every node.
func newOurMultiplexCluster(tb testing.TB, n int, budget int64, g getter.Getter) *muxTarget {
	c := &ourCluster{}
	var addrs []string
	for range n {
		ln := listenLoopback(tb)
		addrs = append(addrs, "http://"+ln.Addr().String())
		c.nodes = append(c.nodes, &ourNode{ln: ln, done: make(chan struct{})})
	}
	m := &muxTarget{framed: true}
	for i, nd := range c.nodes {
		nd.pool, nd.reg, nd.group = newGeeNodeOpts(tb, addrs[i], addrs, httpGroup, budget, g,
			&nethttp.PoolOptions{Logger: quietLog(), Multiplex: true})
		pc := &protoCounter{h: nd.pool}
		m.counters = append(m.counters, pc)
		nd.srv = nethttp.NewServer("", pc, nil)
		go func() {
			defer close(nd.done)
			_ = nd.srv.Serve(nd.ln)
		}()
		pool := nd.pool
		tb.Cleanup(func() { _ = pool.Close() })
	}
	m.peerRequests = func() (total int64) {
		for _, nd := range c.nodes {
			total += nd.group.Stats().PeerRequests
		}
		return total
	}
	tb.Cleanup(c.close)
	m.httpTarget = c.target()
	return m
}
