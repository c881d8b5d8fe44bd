package nethttp

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

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
// owns a key and fetches it with a Client. Its peer set is a consistent-hash
// ring over the normalised peer URLs (a picker.Peers, the ring every
// binding uses, so that the AWS Lambda binding places keys alike): Set
// replaces the peer list at run time, Owner names a key's owner, Self and
// Addrs give this node's and every node's address. Give a Pool to the
// node's groups as cache.GroupOptions.Peers and serve it with an
// http.Server (NewServer), or make it and serve it in one call with
// Listen; under GOOS=js, where there is no net/http, the JavaScript host
// serves it through wasmjs.Func. It is safe for concurrent
// use, including Set while requests are served.
type Pool struct {
	peers   *picker.Peers
	poolNet // this platform's side: the transport and the multiplexed carriage (pool_other.go), or what wasmjs serves (pool_js.go)
	handler *handler
	log     *slog.Logger

	reg      *cache.Registry
	drainFor time.Duration // PoolOptions.DrainFor
	leaving  atomic.Bool   // Drain was called (drain.go)
	offers   offers        // after a change of the ring (offer.go)
}

// NewPool returns a Pool for the node whose own address (as its peers
// reach it, for example "http://10.0.0.1:8001") is self, serving the groups
// of reg. self is normalised as Set does (scheme and host in lower case,
// no default port, no trailing "/", so "http://H:80/" and "http://h" are
// one node; an invalid address fails); an empty self makes a client-only
// pool that owns no keys. Until Set is called the node owns every key.
// opts may be nil for the defaults. It fails, with an error wrapping
// cache.ErrConfig, for an address or options that cannot work.
func NewPool(self string, reg *cache.Registry, opts *PoolOptions) (*Pool, error) {
	var o PoolOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	co := o.client()
	cc, err := newClientConfig(&co) // checks the platform, makes the default transport
	if err != nil {
		return nil, err
	}
	if err := o.multiplex(&cc); err != nil {
		return nil, err
	}
	var pool *Pool // for OnChange, which Set calls only once NewPool has returned
	peers, err := picker.NewPeers(self, func(addr string) cache.Peer { return cc.client(addr) },
		&picker.Options{Replicas: o.Cluster.Replicas, Hash: o.Cluster.Hash, Normalize: peerhttp.NormalizeURL, Logger: o.Logger,
			HandoffWindow: o.HandoffWindow, Handoff: true, OnChange: func() { pool.ringChanged() }})
	if err != nil {
		return nil, err // wraps cache.ErrConfig
	}
	ho := o.handler()
	ho.Self = peers.Self()
	if ho.Self == "" && len(ho.Secret) > 0 {
		// A client-only pool serves no peers; no request can be signed
		// for it.
		ho.Self = clientOnlySelf
	}
	h, err := newHandler(reg, &ho)
	if err != nil {
		return nil, err
	}
	if o.DrainFor < 0 {
		return nil, fmt.Errorf("geecache: %w: DrainFor %v is negative", cache.ErrConfig, o.DrainFor)
	}
	if o.DrainFor == 0 {
		o.DrainFor = defaultDrainFor
	}
	pool = &Pool{peers: peers, poolNet: newPoolNet(cc, &o, h), handler: h, log: o.Logger, reg: reg, drainFor: o.DrainFor}
	return pool, nil
}

// Set replaces the peer list with addrs, the base URLs of every node of
// the cluster (this one included: Self is added if it is missing). Each is
// normalised as NewPool normalises self; if one is invalid, Set returns an
// error wrapping cache.ErrConfig and keeps the old list. Empty and
// duplicate addresses are ignored, and the order does not matter. Keys
// move only to and from the nodes added or removed, and a change of the
// ring starts an offer of the keys that moved to their new owners
// (bounded by PoolOptions.DrainFor; Close ends it). Set logs the new list
// and may be called while requests are served; dns.Watch and
// kubernetes.Watch call it for you.
func (p *Pool) Set(addrs ...string) error { return p.peers.Set(addrs...) }

// Owner returns the URL of the node that owns key, this node's (Self)
// included, as the ring places it: for diagnostics, or to route a request
// to the node that owns its key. It does not allocate.
func (p *Pool) Owner(key string) string { return p.peers.Owner(key) }

// Self returns this node's own URL, normalised (scheme and host in lower
// case, no default port, no trailing "/"); "" for a client-only pool.
func (p *Pool) Self() string { return p.peers.Self() }

// Addrs returns the URLs on the ring, Self included, normalised and
// sorted.
func (p *Pool) Addrs() []string { return p.peers.Addrs() }

// ListPeers returns the Clients of every node on the ring but this one,
// in address order. It implements cache.PeerLister, so that a group's
// Remove, Set and Purge reach every node; an application need not call it.
func (p *Pool) ListPeers() []cache.Peer { return p.peers.ListPeers() }

// PickFallback names the peers a group asks for key beyond its owner:
// next, the first other node after the owner on the ring that skip (nil,
// or the peers the group has ejected) does not reject, nil when that is
// this node or there is none; and previous, the key's owner before the last change of the
// peer list, within PoolOptions.HandoffWindow of it, which may still hold
// the key; changed is when the list last changed. See
// picker.Peers.PickFallback. A group calls it (cache.PeerPolicy); an
// application need not.
func (p *Pool) PickFallback(key string, skip func(cache.Peer) bool) (next, previous cache.Peer, changed time.Time) {
	return p.peers.PickFallback(key, skip)
}

// PickPeer returns the Client of the peer that owns key, or ok == false if
// this node owns it (or, while it drains, the Client of the key's next
// owner), and logs the choice at debug level. It implements
// cache.PeerPicker.
func (p *Pool) PickPeer(key string) (cache.Peer, bool) {
	peer, ok := p.peers.PickPeer(key)
	if !ok && p.leaving.Load() {
		peer, ok = p.pickLeaving(key)
	}
	if ok && p.log.Enabled(context.Background(), slog.LevelDebug) {
		p.log.LogAttrs(context.Background(), slog.LevelDebug, "geecache: pick peer",
			slog.String("self", p.Self()), slog.String("key", key), slog.String("peer", peer.(*Client).Addr()))
	}
	return peer, ok
}

// Close is the Pool's side of stopping a node at once: it does not drain
// (see Drain, which does, for PoolOptions.DrainFor) and returns without
// waiting for the drain's length, whatever DrainFor is. Close the node's
// Server too (Server.Close, or Server.Shutdown to finish the requests in
// flight), before or after.
//
// It cancels the offer of keys that the last change of the peer list
// started (each Set that changes the ring starts one, bounded by
// PoolOptions.DrainFor), if it is still under way, and waits until it and
// every one started before it have ended; a Set during Close may start one
// more. Then it closes the idle connections to the peers. It does not stop
// a Drain's offer nor end its drain: both go on until their own end
// or the end of Drain's context, and open new connections as they need
// them. Requests in flight are not interrupted (shut the Server down
// for that); the pool stays usable, and opens new connections if it is
// used again. Multiplexed connections (PoolOptions.Multiplex), both those
// the pool opened and those it serves, close once their requests in
// flight are answered; a peer on a connection it serves is told to send
// its new requests over a new one (a request it sent that the pool did not
// take is sent again, never failed).
func (p *Pool) Close() error {
	p.stopOffers()
	p.closeConns()
	return nil
}

var (
	_ cache.PeerPicker = (*Pool)(nil)
	_ cache.PeerLister = (*Pool)(nil)
)
