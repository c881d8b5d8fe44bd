package nethttp

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/picker"
)

// clientOnlySelf is the Self of a client-only pool's handler when there is
// a secret: an address no peer list names (.invalid is reserved), so every
// signed request to it is rejected.
const clientOnlySelf = "http://client-only.invalid"

// A Pool is one node's side of an HTTP cluster: the http.Handler that serves
// its peers, and the cache.PeerPicker that tells its groups which peer
// owns a key (a consistent-hash ring over the peer addresses) and fetches
// it with a Client. Give it to the node's groups as cache.GroupOptions.Peers
// and serve it with an http.Server (NewServer). It is safe for concurrent
// use, including Set while requests are served. The AWS Lambda binding
// builds its peers with a Pool too, so both bindings place keys alike.
type Pool struct {
	handler *handler
	self    string
	peers   *picker.Peers
	rt      http.RoundTripper // shared by the pool's clients
	log     *slog.Logger
}

// NewPool returns a Pool for the node whose own address (as its peers
// reach it, for example "http://10.0.0.1:8001") is self, serving the groups
// of reg. self is normalised as Set does; an empty self makes a
// client-only pool that owns no keys. Until Set is called the node owns
// every key. opts may be nil for the defaults. It fails, with an error
// wrapping cache.ErrConfig, for an address or options that cannot work.
func NewPool(self string, reg *cache.Registry, opts *PoolOptions) (*Pool, error) {
	var o PoolOptions
	if opts != nil {
		o = *opts
	}
	if self != "" {
		var err error
		if self, err = peerhttp.NormalizeURL(self); err != nil {
			return nil, err
		}
	}
	ho := o.handler()
	ho.Self = self
	if self == "" && len(ho.Secret) > 0 {
		// A client-only pool serves no peers; no request can be signed
		// for it.
		ho.Self = clientOnlySelf
	}
	h, err := newHandler(reg, &ho)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	co := o.client()
	cc, err := newClientConfig(&co) // checks the platform, makes the default transport
	if err != nil {
		return nil, err
	}
	p := &Pool{handler: h, self: self, rt: cc.rt, log: o.Logger}
	// Set normalises every address before the ring sees it.
	p.peers, err = picker.NewPeers(self, func(addr string) cache.PeerGetter { return cc.client(addr) },
		&picker.Options{Replicas: o.Replicas, Hash: o.Hash})
	if err != nil {
		return nil, err // wraps cache.ErrConfig
	}
	return p, nil
}

// ServeHTTP serves the node's peers: it answers a protocol request for a
// group of the Pool's registry. The path is taken in its escaped form, so
// a key containing "/" (sent as "%2F") is one key; the base path, if any,
// is removed first. Mount the Pool at the root, under its BasePath, or
// behind http.StripPrefix.
func (p *Pool) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.handler.ServeHTTP(w, r) }

// Set replaces the pool's peer list with addrs (base URLs; listing self
// too is recommended, so that every node gets the same list). Each address
// is normalised (scheme and host in lower case, no default port, no
// trailing "/"), so "http://H:80/" and "http://h" are one node. If any
// address is invalid, Set returns an error wrapping cache.ErrConfig and
// keeps the old list. Keys move only between the nodes that were added or
// removed.
func (p *Pool) Set(addrs ...string) error {
	norm := make([]string, 0, len(addrs))
	for _, a := range addrs {
		n, err := peerhttp.NormalizeURL(a)
		if err != nil {
			return err
		}
		norm = append(norm, n)
	}
	p.peers.Set(norm...)
	p.log.LogAttrs(context.Background(), slog.LevelInfo, "geecache: peers set",
		slog.String("self", p.self), slog.Any("peers", p.peers.Addrs()))
	return nil
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

// PeerGetters returns the Clients of every peer but this node. It
// implements cache.PeerLister, so that Group.Remove and Group.Set reach
// every node.
func (p *Pool) PeerGetters() []cache.PeerGetter { return p.peers.PeerGetters() }

// Owner returns the address of the node that owns key (self included).
func (p *Pool) Owner(key string) string { return p.peers.Owner(key) }

// Self returns the node's own address, normalised.
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
