package lambda

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/picker"
)

// PeerOptions says how a program reaches the peers of a cluster and
// places keys on them. A Lambda node takes it as Options.Peers, a Peers as
// PeersOptions.Peers; every field is read by both. As everywhere in
// GeeCache, the zero value of a field means its default.
type PeerOptions struct {
	// Replicas and Hash configure the consistent-hash ring (see
	// picker.Options). Every node of a cluster, of any binding, must use
	// the same, as with nethttp.PoolOptions, so that they agree on owners.
	Replicas int
	Hash     picker.Hash

	// Timeout bounds one request to a peer, of either kind; 0 means
	// 10 s (as for a nethttp.Pool), and a negative value is an error. A
	// caller's context with a sooner deadline wins. When it expires the
	// calling group loads the key itself.
	Timeout time.Duration

	// Propagator, if not nil, injects context (a trace) into the requests
	// to peers; a Lambda node also extracts it from the requests it
	// serves.
	Propagator protocol.Propagator

	// BasePath is the escaped path prefix under which the peers named by
	// URL serve the protocol (see nethttp.ClientOptions.BasePath), such as
	// "/cache" for net/http nodes; "" for Function URLs, which serve it at
	// the root.
	BasePath string

	// Transport sends the requests to peers named by URL. Nil means one
	// transport from nethttp.NewTransport, whose idle connections
	// Peers.Close and Node.Close close. For a Lambda node whose
	// Config.URLAuthIAM is set it is the base of the SigV4Transport that
	// signs them.
	Transport http.RoundTripper

	// Client sends the invocations of the peers named by function,
	// through the Lambda Invoke API, authenticated by IAM (the caller
	// needs lambda:InvokeFunction on the peer functions). Nil means a
	// client made when a peer named by function is first listed:
	// credentials and region from the environment (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION: on Lambda, the
	// function's execution role and region), no retries (a failed fetch
	// falls back to a local load at once, and a throttled peer is not
	// pressed further), over nethttp.NewTransport. For the SDK's full
	// default chain, pass a client made from awsdefault.Config with
	// NewFromConfig of the SDK's package lambda. Peers.Close and
	// Node.Close close the idle connections of an SDK client's HTTP
	// client, this one's too; it stays usable.
	Client InvokeAPI
}

// PeersOptions configures a Peers: what a Lambda node takes from its
// Config, and the PeerOptions. The conventions are those of PeerOptions;
// a nil pointer means all defaults.
type PeersOptions struct {
	// Secret, if not empty, signs every request to a peer and checks
	// every answer (as nethttp.ClientOptions.Secret). Not needed between
	// nodes named by function: IAM authenticates them.
	Secret []byte

	// MaxValueBytes is the largest value read from a peer; 0 means
	// 64 MiB, the protocol's default.
	MaxValueBytes int64

	// Qualifier, if set, is the version or alias invoked on every peer
	// named by function (for example "live"). A peer named
	// "function:alias" carries its own.
	Qualifier string

	// Resolve, if not nil, maps a peer's name on the ring to the function
	// name an invocation carries and the base URL of the Lambda API to
	// send it to ("" keeps the client's). It is for local runs: the
	// Runtime Interface Emulator serves one function, named "function",
	// per process, so each peer is a different endpoint (a Lambda node
	// gets this from Config.Endpoints).
	Resolve func(name string) (function, endpoint string)

	// Logger receives the changes of the peer list. Nil means
	// slog.Default().
	Logger *slog.Logger

	// Peers says how the peers are reached and keys placed.
	Peers PeerOptions
}

// Peers is a cache.PeerPicker for clusters of Lambda functions, net/http
// nodes, or both: a consistent-hash ring (package picker, with the ring
// options of nethttp.Pool) whose members are named either by a function
// name or ARN, fetched from through the Lambda Invoke API, or by an
// http(s) base URL (a net/http node, or a Function URL),
// fetched from with a nethttp.Client. Every node of a cluster is given the
// same list of names. A net/http node uses a Peers as its groups' picker
// to reach Lambda peers, and serves its own peers as usual (a nethttp.Pool).
// It is safe for concurrent use, including Set while keys are picked.
type Peers struct {
	self  string
	peers *picker.Peers
	rt    http.RoundTripper // the transport NewPeers made, or nil
	log   *slog.Logger

	mu  sync.Mutex // serialises Set
	api InvokeAPI  // PeerOptions.Client, or the default made by Set
}

// functionName matches what the Lambda API accepts as a FunctionName: a
// name, or an ARN, with an optional version or alias.
var functionName = regexp.MustCompile(`^(arn:aws[a-z-]*:lambda:[a-z0-9-]+:[0-9]{12}:function:)?[A-Za-z0-9_-]{1,64}(:(\$LATEST|[A-Za-z0-9_-]{1,128}))?$`)

// isFunctionName reports whether name names a Lambda function (a name or
// an ARN, with an optional qualifier) rather than a URL.
func isFunctionName(name string) bool { return functionName.MatchString(name) }

// normalizeName returns a peer name as the ring knows it: a function name
// as it is, a URL normalised with peerhttp.NormalizeURL.
func normalizeName(s string) (string, error) {
	if strings.Contains(s, "://") {
		return peerhttp.NormalizeURL(s)
	}
	if !isFunctionName(s) {
		return "", fmt.Errorf("geecache: %w: peer %q is neither an http(s) URL nor a Lambda function name or ARN", cache.ErrConfig, s)
	}
	return s, nil
}

// NewPeers returns the Peers of the node named self on the ring (its
// function name, or its URL for a net/http node; "" for a client that owns
// no keys). Until Set is called the node owns every key. opts may be nil.
// If opts.Peers.Client is nil, the first Set that lists a peer named by
// function makes one (see PeerOptions.Client).
// It fails, with an error wrapping cache.ErrConfig (or protocol.ErrConfig), for a
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
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	po := o.Peers
	switch {
	case po.Timeout < 0:
		return nil, fmt.Errorf("geecache: %w: Timeout %v is negative", cache.ErrConfig, po.Timeout)
	case po.Timeout == 0:
		po.Timeout = peerhttp.Timeout
	}
	p := &Peers{self: self, log: o.Logger}
	if po.Transport == nil {
		p.rt = nethttp.NewTransport()
		po.Transport = p.rt
	}
	co := nethttp.ClientOptions{BasePath: po.BasePath, Secret: o.Secret, MaxValueBytes: o.MaxValueBytes,
		Timeout: po.Timeout, Transport: po.Transport, Propagator: po.Propagator}
	if _, err := nethttp.NewClient("http://localhost", &co); err != nil { // checks the options
		return nil, err
	}
	proto, err := protocol.NewClient(&protocol.ClientOptions{Secret: o.Secret, MaxValueBytes: o.MaxValueBytes, Propagator: po.Propagator})
	if err != nil {
		return nil, err
	}
	inv := invokeConfig{qualifier: o.Qualifier, resolve: o.Resolve}
	p.api = po.Client
	newGetter := func(name string) cache.PeerGetter {
		if !strings.Contains(name, "://") {
			return newInvokeClient(name, p.api, inv, proto, po.Timeout) // Set made p.api
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
// PeerOptions.Client is nil, the first time one is listed.
func (p *Peers) defaultAPI() error {
	rt := p.rt
	if rt == nil { // the given Transport may sign for URLs: not for the API
		rt = nethttp.NewTransport() // closed by Close, through the client
	}
	c, err := newInvokeAPI(&http.Client{Transport: rt})
	if err != nil {
		return err
	}
	p.api = c
	return nil
}

// PickPeer returns the getter of the peer that owns key, or ok == false
// if this node owns it. It implements cache.PeerPicker.
func (p *Peers) PickPeer(key string) (cache.PeerGetter, bool) { return p.peers.PickPeer(key) }

// PeerGetters returns the getters of every peer but this node. It
// implements cache.PeerLister, so that Group.Remove and Group.Set reach
// every node.
func (p *Peers) PeerGetters() []cache.PeerGetter { return p.peers.PeerGetters() }

// Owner returns the name of the node that owns key (self included), as
// the ring knows it: a function name as given, a URL normalised as every
// binding does (scheme and host in lower case, no default port, no
// trailing "/"; Node.Config holds a node's names so).
func (p *Peers) Owner(key string) string { return p.peers.Owner(key) }

// Close closes the idle connections of the transport that NewPeers made
// for peers named by URL (if PeerOptions.Transport was nil) and of the
// Lambda client's HTTP client (the default one, or an SDK client given as
// PeerOptions.Client). The Peers stays usable.
func (p *Peers) Close() error {
	if t, ok := p.rt.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
	p.mu.Lock()
	api := p.api
	p.mu.Unlock()
	closeIdleConnections(api)
	return nil
}
