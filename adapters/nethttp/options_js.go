//go:build js

package nethttp

import (
	"log/slog"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// ClientOptions configures a Client. As everywhere in GeeCache (see
// cache.GroupOptions), the zero value of a field means its default, a nil
// pointer means all defaults, and a value that cannot work makes the
// constructor fail. Under GOOS=js the client always sends its requests
// with the JavaScript host's fetch(), so there is no Transport to choose
// (and no net/http linked; see the package documentation).
type ClientOptions struct {
	// BasePath is the escaped path prefix under which the peer serves the
	// protocol (see Cluster.BasePath).
	BasePath string

	// Secret, if not empty, signs every request.
	Secret []byte

	// MaxValueBytes is the largest value read (and the largest request
	// body sent: a PUT's value); 0 means 64 MiB.
	MaxValueBytes int64

	// Timeout bounds one request (send, wait, read); when it expires the
	// calling node loads the key itself. 0 means 10 s. A caller's context
	// with a sooner deadline wins.
	Timeout time.Duration

	// Propagator, if not nil, injects context (a trace) into requests.
	Propagator protocol.Propagator
}

// PoolOptions configures a Pool: the settings every node shares
// (Cluster), then those of this node alone, for the side that serves its
// peers (through package adapters/wasmjs: the host listens) and the
// Clients it fetches from them with (the host's fetch()). As everywhere in
// GeeCache (see cache.GroupOptions), the zero value of a field means its
// default, a nil pointer means all defaults, and a value that cannot work
// makes the constructor fail. The other builds' Transport and Multiplex
// cannot apply under GOOS=js, so they do not exist here.
type PoolOptions struct {
	// Cluster is what every node of the cluster is given alike.
	Cluster Cluster

	// MaxSkew is how old, or how far in the future, a signed request may
	// be; 0 means 30 seconds.
	MaxSkew time.Duration

	// HideErrors sends generic error bodies (no source error text, no
	// peer address) to callers that did not sign their request.
	HideErrors bool

	// Timeout bounds one request to a peer (send, wait, read); when it
	// expires the calling node loads the key itself. 0 means 10 s. A
	// caller's context with a sooner deadline wins.
	Timeout time.Duration

	// Propagator, if not nil, injects context (a trace) into requests to
	// peers and extracts it from theirs.
	Propagator protocol.Propagator

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
	// the source; it offers them its keys in the first 80% of it. It also
	// bounds the offer that follows each change of the peer list. 0
	// means 10 s.
	DrainFor time.Duration

	// HandoffWindow is how long after a change of the peer list the new
	// owner of a key asks its previous owner for it (picker.Options.HandoffWindow):
	// 0 means 30 s.
	HandoffWindow time.Duration
}

func (o *PoolOptions) client() ClientOptions {
	c := &o.Cluster
	return ClientOptions{BasePath: c.BasePath, Secret: c.Secret, MaxValueBytes: c.MaxValueBytes,
		Timeout: o.Timeout, Propagator: o.Propagator}
}
