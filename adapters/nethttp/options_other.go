//go:build !js

package nethttp

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// ClientOptions configures a Client. As everywhere in GeeCache (see
// cache.GroupOptions), the zero value of a field means its default, a nil
// pointer means all defaults, and a value that cannot work makes the
// constructor fail.
type ClientOptions struct {
	// BasePath is the escaped path prefix under which the peer serves the
	// protocol (see Cluster.BasePath).
	BasePath string

	// Secret, if not empty, signs every request.
	Secret []byte

	// MaxValueBytes is the largest value read; 0 means 64 MiB.
	MaxValueBytes int64

	// Timeout bounds one request (connect, send, wait, read); when it
	// expires the calling node loads the key itself. 0 means 10 s. A caller's
	// context with a sooner deadline wins.
	Timeout time.Duration

	// Transport sends the requests. Nil means a new transport from
	// NewTransport, used by this client alone.
	Transport http.RoundTripper

	// Propagator, if not nil, injects context (a trace) into requests.
	Propagator protocol.Propagator
}

// PoolOptions configures a Pool: the settings every node shares
// (Cluster), then those of this node alone, for the side that serves its
// peers and the Clients it fetches from them with. As everywhere in
// GeeCache (see cache.GroupOptions), the zero value of a field means its
// default, a nil pointer means all defaults, and a value that cannot work
// makes the constructor fail.
type PoolOptions struct {
	// Cluster is what every node of the cluster is given alike.
	Cluster Cluster

	// MaxSkew is how old, or how far in the future, a signed request may
	// be; 0 means 30 seconds.
	MaxSkew time.Duration

	// HideErrors sends generic error bodies (no source error text, no
	// peer address) to callers that did not sign their request.
	HideErrors bool

	// Timeout bounds one request to a peer (connect, send, wait, read);
	// when it expires the calling node loads the key itself. 0 means 10 s.
	// A caller's context with a sooner deadline wins.
	Timeout time.Duration

	// Propagator, if not nil, injects context (a trace) into requests to
	// peers and extracts it from theirs.
	Propagator protocol.Propagator

	// Transport is shared by the clients of all peers. Nil means one
	// transport from NewTransport, whose idle connections Close closes.
	Transport http.RoundTripper

	// Logger receives rejected requests, load failures, the changes of
	// the peer list and, at debug level, each choice of owner. Nil means
	// slog.Default().
	Logger *slog.Logger

	// AllowOrigins lists the web origins ("https://app.example.com", or
	// "*" for any) whose pages may call the node from a browser: the Pool
	// answers their CORS preflights and lets them read its answers. Nil
	// (the default) allows none. A browser cannot keep a secret: a node
	// that browsers call must not rely on Cluster.Secret.
	AllowOrigins []string

	// UnsignedWrites accepts peers' PUT and DELETE without a
	// Cluster.Secret (their Group.Set and Group.Remove). Off by default:
	// without a secret anyone who can reach the node could replace or
	// drop its values, so writes are refused (401).
	UnsignedWrites bool

	// DrainFor is how long Pool.Drain keeps a leaving node serving, so that
	// the new owners of its keys can take them from its memory instead of
	// the source (see cache.PeerPolicy.HandoffTimeout and
	// picker.Options.HandoffWindow); it offers them its keys in the
	// first 80% of it (see Pool.Drain). It also bounds the offer that
	// follows each change of the peer list (the keys that moved, offered
	// to their new owners). 0 means 10 s. Give the process that long, and
	// a little more to finish requests in flight, to stop (Kubernetes:
	// terminationGracePeriodSeconds). Pool.Close, Server.Close and
	// Node.Close do not wait for it: they stop the node at once.
	DrainFor time.Duration

	// HandoffWindow is how long after a change of the peer list the new
	// owner of a key asks its previous owner for it (picker.Options.HandoffWindow):
	// 0 means 30 s.
	HandoffWindow time.Duration

	// Multiplex sends this node's requests to each plain-http peer over
	// one multiplexed connection instead of a pool of HTTP/1.1 keep-alive
	// connections: many requests in flight at once, answered in any
	// order, at a lower CPU cost per request under load. The connection
	// is opened with an HTTP/1.1 Upgrade on the peer's own port; every
	// Pool accepts it, and a peer that does not (an older node, a proxy)
	// is asked over HTTP/1.1 through Transport, as are https peers. The
	// requests and answers are the protocol's own, signed, checked and
	// limited alike. Transport's DialContext, if it is an *http.Transport
	// with one, opens the connections. Not available under GOOS=wasip1
	// (no sockets): NewPool fails. Builds for GOOS=js have no such field
	// (nor Transport): there every request goes through the host's fetch().
	Multiplex bool
}

func (o *PoolOptions) client() ClientOptions {
	c := &o.Cluster
	return ClientOptions{BasePath: c.BasePath, Secret: c.Secret, MaxValueBytes: c.MaxValueBytes,
		Timeout: o.Timeout, Transport: o.Transport, Propagator: o.Propagator}
}
