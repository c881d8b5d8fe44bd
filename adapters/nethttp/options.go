package nethttp

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/picker"
)

// handlerOptions configures a handler: the serving side of PoolOptions
// (whose fields document these), with the node's own normalised address.
type handlerOptions struct {
	BasePath       string
	Secret         []byte
	Self           string // required with a Secret
	MaxValueBytes  int64
	MaxSkew        time.Duration
	HideErrors     bool
	Logger         *slog.Logger
	Propagator     protocol.Propagator
	UnsignedWrites bool
	AllowOrigins   []string
}

// ClientOptions configures a Client. As everywhere in GeeCache (see
// cache.GroupOptions), the zero value of a field means its default, a nil
// pointer means all defaults, and a value that cannot work makes the
// constructor fail.
type ClientOptions struct {
	// BasePath is the escaped path prefix under which the peer serves the
	// protocol (see PoolOptions.BasePath).
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

// PoolOptions configures a Pool: the settings of the side that serves its
// peers, of the Clients it fetches from them with, and of its
// consistent-hash ring, in one flat struct so that a setting both sides
// share (BasePath, Secret, MaxValueBytes) is given once. As everywhere in
// GeeCache (see cache.GroupOptions), the zero value of a field means its
// default, a nil pointer means all defaults, and a value that cannot work
// makes the constructor fail. Every node of a cluster needs the same
// BasePath, Secret, MaxValueBytes, Replicas and Hash.
type PoolOptions struct {
	// BasePath is the escaped path prefix under which the protocol is
	// served and asked for, such as "/cache": the Pool answers
	// BasePath+"/_geecache/…". It must start with "/" and not end with
	// one. "" (the default) serves the protocol at the root.
	BasePath string

	// Secret turns on peer authentication: every request to a peer is
	// signed with it, and the Pool refuses peers' requests that are not
	// (see protocol.ServerOptions).
	Secret []byte

	// MaxValueBytes is the largest value sent or read; 0 means 64 MiB.
	MaxValueBytes int64

	// MaxSkew is how old, or how far in the future, a signed request may
	// be; 0 means 30 seconds.
	MaxSkew time.Duration

	// HideErrors sends generic error bodies to callers that did not sign
	// (see protocol.ServerOptions).
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

	// Logger receives rejected requests, load failures and, at debug
	// level, each choice of owner. Nil means slog.Default().
	Logger *slog.Logger

	// AllowOrigins lists the web origins ("https://app.example.com", or
	// "*" for any) whose pages may call the node from a browser: the Pool
	// answers their CORS preflights and lets them read its answers. Nil
	// (the default) allows none. A browser cannot keep a secret: a node
	// that browsers call must not rely on Secret.
	AllowOrigins []string

	// UnsignedWrites accepts peers' PUT and DELETE without a Secret (see
	// protocol.ServerOptions.UnsignedWrites). Off by default.
	UnsignedWrites bool

	// Replicas and Hash configure the ring (see picker.Options).
	Replicas int
	Hash     picker.Hash
}

func (o *PoolOptions) handler() handlerOptions {
	return handlerOptions{AllowOrigins: o.AllowOrigins, UnsignedWrites: o.UnsignedWrites, BasePath: o.BasePath, Secret: o.Secret, MaxValueBytes: o.MaxValueBytes,
		MaxSkew: o.MaxSkew, HideErrors: o.HideErrors, Logger: o.Logger, Propagator: o.Propagator}
}

func (o *PoolOptions) client() ClientOptions {
	return ClientOptions{BasePath: o.BasePath, Secret: o.Secret, MaxValueBytes: o.MaxValueBytes,
		Timeout: o.Timeout, Transport: o.Transport, Propagator: o.Propagator}
}

// checkBasePath validates an escaped base path: "" or "/…" without a
// trailing "/", a query or a fragment.
func checkBasePath(p string) error {
	if p == "" {
		return nil
	}
	if p[0] != '/' || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "?#") {
		return fmt.Errorf("geecache: %w: BasePath %q must start with \"/\" and have no trailing \"/\", query or fragment", cache.ErrConfig, p)
	}
	return nil
}
