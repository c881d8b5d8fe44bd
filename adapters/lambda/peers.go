package lambda

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/picker"
)

// PeersOptions configures Peers. As everywhere in GeeCache, the zero value
// of a field means its default and a nil pointer means all defaults.
type PeersOptions struct {
	// Pool holds what a Peers shares with a nethttp.Pool, so that Lambda
	// and net/http nodes agree on owners and speak alike: the ring
	// (Replicas, Hash: the same on every node), what every fetch uses
	// (Secret, MaxValueBytes, Timeout, Propagator, Logger), and how peers
	// named by URL are reached (BasePath, Transport). Its Handler settings
	// (MaxSkew, HideErrors) are not used here.
	Pool nethttp.PoolOptions

	// Invoke configures how peers named by function are invoked.
	Invoke InvokeOptions
}

// Peers is a cache.PeerPicker for clusters of Lambda functions, net/http
// nodes, or both: a consistent-hash ring (package picker, with the ring
// options of nethttp.Pool) whose members are named either by a function
// name or ARN, fetched from with an InvokeClient through the Lambda Invoke
// API, or by an http(s) base URL (a net/http node, or a Function URL),
// fetched from with a nethttp.Client. Every node of a cluster is given the
// same list of names. A net/http node uses a Peers as its groups' picker
// to reach Lambda peers, and serves its own peers as usual (a nethttp.Pool).
// It is safe for concurrent use, including Set while keys are picked.
type Peers struct {
	self  string
	peers *picker.Peers
	rt    http.RoundTripper // the transport NewPeers made, or nil
	apiRT http.RoundTripper // the default Lambda client's own transport, or nil
	log   *slog.Logger

	mu  sync.Mutex // serialises Set
	api InvokeAPI  // InvokeOptions.Client, or the default made by Set
}

// functionName matches what the Lambda API accepts as a FunctionName: a
// name, or an ARN, with an optional version or alias.
var functionName = regexp.MustCompile(`^(arn:aws[a-z-]*:lambda:[a-z0-9-]+:[0-9]{12}:function:)?[A-Za-z0-9_-]{1,64}(:(\$LATEST|[A-Za-z0-9_-]{1,128}))?$`)

// IsFunctionName reports whether name names a Lambda function (a name or
// an ARN, with an optional qualifier) rather than a URL.
func IsFunctionName(name string) bool { return functionName.MatchString(name) }

// normalizeName returns a peer name as the ring knows it: a function name
// as it is, a URL normalised with peerhttp.NormalizeURL.
func normalizeName(s string) (string, error) {
	if strings.Contains(s, "://") {
		return peerhttp.NormalizeURL(s)
	}
	if !IsFunctionName(s) {
		return "", fmt.Errorf("geecache: %w: peer %q is neither an http(s) URL nor a Lambda function name or ARN", cache.ErrConfig, s)
	}
	return s, nil
}

// NewPeers returns the Peers of the node named self on the ring (its
// function name, or its URL for a net/http node; "" for a client that owns
// no keys). Until Set is called the node owns every key. opts may be nil.
// If opts.Invoke.Client is nil, the first Set that lists a peer named by
// function makes one with NewInvokeAPI.
// It fails, with an error wrapping cache.ErrConfig, for a
// name or options that cannot work.
func NewPeers(self string, opts *PeersOptions) (*Peers, error) {
	var o PeersOptions
	if opts != nil {
		o = *opts
	}
	if self != "" {
		var err error
		if self, err = normalizeName(self); err != nil {
			return nil, err
		}
	}
	po := o.Pool
	if po.Logger == nil {
		po.Logger = slog.Default()
	}
	switch {
	case po.Timeout < 0:
		return nil, fmt.Errorf("geecache: %w: Timeout %v is negative", cache.ErrConfig, po.Timeout)
	case po.Timeout == 0:
		po.Timeout = peerhttp.Timeout
	}
	p := &Peers{self: self, log: po.Logger}
	if po.Transport == nil {
		p.rt = nethttp.NewTransport()
		po.Transport = p.rt
	}
	co := nethttp.ClientOptions{BasePath: po.BasePath, Secret: po.Secret, MaxValueBytes: po.MaxValueBytes,
		Timeout: po.Timeout, Transport: po.Transport, Propagator: po.Propagator}
	if _, err := nethttp.NewClient("http://localhost", &co); err != nil { // checks the options
		return nil, err
	}
	proto, err := protocol.NewClient(&protocol.ClientOptions{Secret: po.Secret, MaxValueBytes: po.MaxValueBytes, Propagator: po.Propagator})
	if err != nil {
		return nil, err
	}
	inv := o.Invoke
	p.api = inv.Client
	newGetter := func(name string) cache.PeerGetter {
		if !strings.Contains(name, "://") {
			return newInvokeClient(name, p.api, &inv, proto, po.Timeout) // Set made p.api
		}
		c, err := nethttp.NewClient(name, &co)
		if err != nil { // not reached: names and options are checked
			p.log.Error("geecache: peer client", "peer", name, "err", err)
			return nil
		}
		return c
	}
	p.peers, err = picker.NewPeers(self, newGetter, &picker.Options{Replicas: po.Replicas, Hash: po.Hash})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Set replaces the peer list with names (function names or ARNs, and
// http(s) base URLs; listing self too is recommended, so that every node
// gets the same list). URLs are normalised as nethttp.Pool.Set does. If
// any name is invalid, or the default Lambda client cannot be made (no
// region in the environment), Set returns an error wrapping cache.ErrConfig and
// keeps the old list.
func (p *Peers) Set(names ...string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	norm := make([]string, 0, len(names))
	for _, n := range names {
		s, err := normalizeName(n)
		if err != nil {
			return err
		}
		norm = append(norm, s)
		if p.api == nil && !strings.Contains(s, "://") && s != p.self {
			if err := p.defaultAPI(); err != nil {
				return err
			}
		}
	}
	p.peers.Set(norm...)
	p.log.LogAttrs(context.Background(), slog.LevelInfo, "geecache: peers set",
		slog.String("self", p.self), slog.Any("peers", p.peers.Addrs()))
	return nil
}

// defaultAPI makes the Lambda client of peers named by function when
// InvokeOptions.Client is nil, the first time one is listed.
func (p *Peers) defaultAPI() error {
	rt := p.rt
	if rt == nil { // the given Transport may sign for URLs: not for the API
		rt = nethttp.NewTransport()
		p.apiRT = rt
	}
	c, err := NewInvokeAPI(&http.Client{Transport: rt})
	if err != nil {
		return err
	}
	p.api = c
	return nil
}

// PickPeer returns the getter of the peer that owns key (an *InvokeClient
// or a *nethttp.Client), or ok == false if this node owns it. It
// implements cache.PeerPicker.
func (p *Peers) PickPeer(key string) (cache.PeerGetter, bool) { return p.peers.PickPeer(key) }

// PeerGetters returns the getters of every peer but this node. It
// implements cache.PeerLister, so that Group.Remove and Group.Set reach
// every node.
func (p *Peers) PeerGetters() []cache.PeerGetter { return p.peers.PeerGetters() }

// Owner returns the name of the node that owns key (self included).
func (p *Peers) Owner(key string) string { return p.peers.Owner(key) }

// Self returns the node's own name, normalised.
func (p *Peers) Self() string { return p.self }

// Peers returns the current names, self included, sorted.
func (p *Peers) Peers() []string { return p.peers.Addrs() }

// Close closes the idle connections of the transports that NewPeers made:
// for URL peers if Pool.Transport was nil, and the default Lambda
// client's. The Peers stays usable.
func (p *Peers) Close() error {
	for _, rt := range []http.RoundTripper{p.rt, p.apiRT} {
		if t, ok := rt.(interface{ CloseIdleConnections() }); ok {
			t.CloseIdleConnections()
		}
	}
	return nil
}
