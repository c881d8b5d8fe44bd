package nethttp

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/picker"
)

// A Pool is one node's side of an HTTP cluster: the Handler that serves
// its peers, and the cache.PeerPicker that tells its groups which peer
// owns a key (a consistent-hash ring over the peer addresses) and fetches
// it with a Client. Give it to the node's groups with cache.WithPeers and
// serve it with an http.Server. It is safe for concurrent use, including
// Set while requests are served.
type Pool struct {
	handler *Handler
	self    string
	peers   *picker.Peers
	rt      http.RoundTripper // shared by the pool's clients
	log     *slog.Logger
}

// NewPool returns a Pool for the node whose own address (as its peers
// reach it, for example "http://10.0.0.1:8001") is self, serving the groups
// of reg. Until Set is called the node owns every key. All options apply.
// All the pool's clients share one transport (from NewTransport unless
// WithTransport is given).
func NewPool(self string, reg *cache.Registry, opts ...Option) *Pool {
	c := newConfig(opts)
	rt := c.transport
	if rt == nil {
		rt = defaultTransport()
	}
	p := &Pool{
		handler: NewHandler(reg, opts...),
		self:    self,
		rt:      rt,
		log:     c.logger,
	}
	p.peers = picker.NewPeers(self, func(addr string) cache.PeerGetter {
		return newClient(addr, c, rt)
	}, c.picker...)
	return p
}

// ServeHTTP serves the node's peers, as Handler does.
func (p *Pool) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.handler.ServeHTTP(w, r) }

// Set replaces the pool's peer list with addrs (base URLs in the same form
// as self; listing self too is recommended, so that every node gets the
// same list). Keys move only between the nodes that were added or removed.
func (p *Pool) Set(addrs ...string) {
	p.peers.Set(addrs...)
	p.log.LogAttrs(context.Background(), slog.LevelInfo, "geecache: peers set",
		slog.String("self", p.self), slog.Any("peers", p.peers.Addrs()))
}

// PickPeer returns the Client of the peer that owns key, or ok == false if
// this node owns it. It implements cache.PeerPicker.
func (p *Pool) PickPeer(key string) (cache.PeerGetter, bool) {
	peer, ok := p.peers.PickPeer(key)
	if ok && p.log.Enabled(context.Background(), slog.LevelDebug) {
		p.log.LogAttrs(context.Background(), slog.LevelDebug, "geecache: pick peer",
			slog.String("self", p.self), slog.String("key", key), slog.String("peer", peer.(*Client).Addr()))
	}
	return peer, ok
}

// Owner returns the address of the node that owns key (self included).
func (p *Pool) Owner(key string) string { return p.peers.Owner(key) }

// Self returns the node's own address.
func (p *Pool) Self() string { return p.self }

// Peers returns the current peer addresses, self included, sorted.
func (p *Pool) Peers() []string { return p.peers.Addrs() }

// Close closes the idle connections to the peers. Requests in flight are
// not interrupted (shut the http.Server down for that); the pool stays
// usable, and opens new connections if it is used again.
func (p *Pool) Close() error {
	closeIdle(p.rt)
	return nil
}
