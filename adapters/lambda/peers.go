//go:build !js

package lambda

import (
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

// PeerOptions says how a program reaches the peers of a cluster. A
// Lambda node takes it as Options.Peers, a Peers as PeersOptions.Peers;
// every field is read by both. What every node of a cluster must share
// (the ring's Replicas and Hash, the BasePath URL peers are asked under,
// the Secret) is a nethttp.Cluster, in Config.Cluster or
// PeersOptions.Cluster. As everywhere in GeeCache, the zero value of a
// field means its default.
type PeerOptions struct {
	// Timeout bounds one request to a peer, of either kind; 0 means
	// 10 s (as for a nethttp.Pool), and a negative value is an error. A
	// caller's context with a sooner deadline wins. When it expires the
	// calling group loads the key itself.
	Timeout time.Duration

	// Propagator, if not nil, injects context (a trace) into the requests
	// to peers; a Lambda node also extracts it from the requests it
	// serves.
	Propagator protocol.Propagator

	// Transport sends the requests to peers named by URL. Nil means one
	// transport from nethttp.NewTransport, whose idle connections
	// Peers.Close and Node.Close close. For a Lambda node whose
	// Config.URLAuthIAM is set it is the base of the NewSigV4Transport transport that
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
	// Cluster is what every node of the cluster, of any binding, is given
	// alike: the ring's Replicas and Hash; the BasePath under which peers
	// named by URL are asked ("" for Function URLs, which serve at the
	// root, unless their Config.Cluster.BasePath names the same prefix);
	// the Secret that signs every request to a peer and checks every
	// answer (not needed between nodes named by function: IAM
	// authenticates them); the largest value read from a peer,
	// MaxValueBytes (0 means 64 MiB).
	Cluster nethttp.Cluster

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

	// Logger receives the changes of the peer list, at debug level. Nil
	// means slog.Default().
	Logger *slog.Logger

	// Peers says how the peers are reached.
	Peers PeerOptions
}

// Peers is a cache.PeerPicker for clusters of Lambda functions, net/http
// nodes, or both: a picker.Peers (the consistent-hash ring every binding
// uses, embedded: Set, Owner, Self and Addrs are its) whose members are
// named either by a function name or ARN, fetched from through the Lambda
// Invoke API, or by an http(s) base URL (a net/http node, or a Function
// URL), fetched from with a nethttp.Client. Every node of a cluster is
// given the same list of names. Set normalises URLs as nethttp.Pool does
// and takes function names as they are; if any name is invalid, or the
// default Lambda client cannot be made (no region in the environment),
// it returns an error wrapping cache.ErrConfig and keeps the old list. A
// net/http node uses a Peers as its groups' picker to reach Lambda peers,
// and serves its own peers as usual (a nethttp.Pool). It is safe for
// concurrent use, including Set while keys are picked.
type Peers struct {
	*picker.Peers
	rt http.RoundTripper // the transport NewPeers made, or nil

	mu  sync.Mutex // guards api
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
// It fails, with an error wrapping cache.ErrConfig, for a name or options
// that cannot work.
func NewPeers(self string, opts *PeersOptions) (*Peers, error) {
	var o PeersOptions
	if opts != nil {
		o = *opts
	}
	var err error
	if self != "" {
		if self, err = normalizeName(self); err != nil {
			return nil, err
		}
	}
	po := o.Peers
	if po.Timeout, err = peerhttp.CheckTimeout(po.Timeout); err != nil {
		return nil, err
	}
	if err := peerhttp.CheckBasePath(o.Cluster.BasePath); err != nil {
		return nil, err
	}
	proto, err := protocol.NewClient(&protocol.ClientOptions{Secret: o.Cluster.Secret, MaxValueBytes: o.Cluster.MaxValueBytes, Propagator: po.Propagator})
	if err != nil {
		return nil, err
	}
	p := &Peers{api: po.Client}
	if po.Transport == nil {
		p.rt = nethttp.NewTransport()
		po.Transport = p.rt
	}
	co := nethttp.ClientOptions{BasePath: o.Cluster.BasePath, Secret: o.Cluster.Secret, MaxValueBytes: o.Cluster.MaxValueBytes,
		Timeout: po.Timeout, Transport: po.Transport, Propagator: po.Propagator}
	inv := invokeConfig{qualifier: o.Qualifier, resolve: o.Resolve}
	// normalize checks a name for the ring and, the first time a peer
	// named by function is listed, makes the default Lambda client, so
	// that Set fails (and keeps the old list) when it cannot be made.
	normalize := func(name string) (string, error) {
		s, err := normalizeName(name)
		if err != nil || strings.Contains(s, "://") || s == self {
			return s, err
		}
		return s, p.defaultAPI()
	}
	newGetter := func(name string) cache.Peer {
		if !strings.Contains(name, "://") {
			return newInvokeClient(name, p.invokeAPI(), inv, proto, po.Timeout) // normalize made it
		}
		c, err := nethttp.NewClient(name, &co)
		if err != nil { // not reached: the name and the options are checked
			return nil
		}
		return c
	}
	p.Peers, err = picker.NewPeers(self, newGetter, &picker.Options{Replicas: o.Cluster.Replicas, Hash: o.Cluster.Hash,
		// No Handoff: a function's memory is an instance's, and its URL
		// reaches any instance, so asking the previous owner would rarely
		// find the key.
		Normalize: normalize, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// invokeAPI returns the Lambda client of peers named by function.
func (p *Peers) invokeAPI() InvokeAPI {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.api
}

// defaultAPI makes the Lambda client of peers named by function when
// PeerOptions.Client is nil, the first time one is listed.
func (p *Peers) defaultAPI() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.api != nil {
		return nil
	}
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

// Close closes the idle connections of the transport that NewPeers made
// for peers named by URL (if PeerOptions.Transport was nil) and of the
// Lambda client's HTTP client (the default one, or an SDK client given as
// PeerOptions.Client). The Peers stays usable.
func (p *Peers) Close() error {
	peerhttp.CloseIdle(p.rt)
	p.mu.Lock()
	api := p.api
	p.mu.Unlock()
	closeIdleConnections(api)
	return nil
}
