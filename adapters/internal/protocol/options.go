package protocol

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/geecache/geecache/cache"
)

// Defaults used for options left at their zero value.
const (
	// DefaultMaxValueBytes is the largest value a node sends or accepts
	// (64 MiB). Bindings with a smaller payload limit, such as AWS Lambda,
	// set their own.
	DefaultMaxValueBytes = 64 << 20

	// DefaultMaxSkew is how far a signed request's timestamp may lie from
	// the verifying node's clock, in either direction, before the request
	// is rejected as stale.
	DefaultMaxSkew = 30 * time.Second
)

// A Propagator carries request-scoped context, such as a W3C trace
// context, from a calling node to the node that serves it, in protocol
// headers. Package adapters/otel provides one. Give the same Propagator to
// both sides.
type Propagator interface {
	// Inject writes what ctx carries into the headers of a request.
	Inject(ctx context.Context, h Header)
	// Extract returns ctx with what the request headers carry.
	Extract(ctx context.Context, h Header) context.Context
}

// ServerOptions configures a Server. The zero value of each field means its
// default, and a nil *ServerOptions means all defaults (see
// cache.GroupOptions for why GeeCache is configured with structs). The
// cluster-wide settings, Secret and MaxValueBytes, must be the same as in
// the ClientOptions of every node.
type ServerOptions struct {
	// Secret turns on peer authentication: a request without a valid,
	// fresh signature is rejected (401) without anything being loaded for
	// it. Empty (the default) leaves authentication off. It is copied.
	Secret []byte

	// Self is the node's own base URL as its peers send requests to it
	// (the target of protocol version 2 signatures), in the form the
	// peers' binding normalises it to (scheme and host in lower case, no
	// default port, no trailing "/"). A signed request for another node is
	// rejected (401). It is required with a
	// Secret and unused without one.
	Self string

	// MaxValueBytes is the largest value the Server sends; a larger one is
	// answered with 413. 0 means DefaultMaxValueBytes.
	MaxValueBytes int64

	// MaxSkew is how old, or how far in the future, a signed request's
	// timestamp may be. 0 means DefaultMaxSkew.
	MaxSkew time.Duration

	// HideErrors makes the error bodies sent to untrusted callers generic
	// ("key not found", "load failed"), so that a source's error text or a
	// peer's address does not reach whoever can call the node (a public
	// Function URL, say); the detail goes to the Logger. With a Secret,
	// every caller that gets an answer has signed its request and is
	// trusted; without one, nobody is (a header proves nothing). Off by
	// default; on by default for Lambda nodes.
	HideErrors bool

	// UnsignedWrites accepts the peers' PUT and DELETE (Group.Set and
	// Group.Remove) without a Secret. Off by default: without a secret,
	// anyone who can reach the node could then replace or drop its
	// values. Turn it on only where the peer port is reachable by the
	// cluster's nodes alone (a private network, a local demo).
	UnsignedWrites bool

	// Logger receives rejected requests and load failures. Nil means
	// slog.Default().
	Logger *slog.Logger

	// Propagator, if not nil, extracts context (a trace) from requests.
	Propagator Propagator
}

// ClientOptions configures a Client. The zero value of each field means its
// default, and a nil *ClientOptions means all defaults. Secret and
// MaxValueBytes must match the ServerOptions of the peers.
type ClientOptions struct {
	// Secret, if not empty, signs every request. It is copied.
	Secret []byte

	// MaxValueBytes is the largest value the Client reads: it refuses a
	// larger announced size and stops reading past it (ErrTooLarge).
	// 0 means DefaultMaxValueBytes.
	MaxValueBytes int64

	// Propagator, if not nil, injects context (a trace) into requests.
	Propagator Propagator
}

// newServerConfig returns o with the defaults filled in.
func newServerConfig(o *ServerOptions) (ServerOptions, error) {
	var c ServerOptions
	if o != nil {
		c = *o
	}
	var err error
	if c.Secret, c.MaxValueBytes, err = common(c.Secret, c.MaxValueBytes); err != nil {
		return c, err
	}
	switch {
	case c.MaxSkew < 0:
		return c, fmt.Errorf("geecache: %w: MaxSkew %v is negative", cache.ErrConfig, c.MaxSkew)
	case c.MaxSkew == 0:
		c.MaxSkew = DefaultMaxSkew
	}
	if c.Secret != nil && c.Self == "" {
		return c, fmt.Errorf("geecache: %w: a Secret needs Self, the node's base URL as its peers reach it", cache.ErrConfig)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

func newClientConfig(o *ClientOptions) (ClientOptions, error) {
	var c ClientOptions
	if o != nil {
		c = *o
	}
	var err error
	c.Secret, c.MaxValueBytes, err = common(c.Secret, c.MaxValueBytes)
	return c, err
}

// common checks and defaults the settings both sides have.
func common(secret []byte, maxValue int64) ([]byte, int64, error) {
	if maxValue < 0 {
		return nil, 0, fmt.Errorf("geecache: %w: MaxValueBytes %d is negative", cache.ErrConfig, maxValue)
	}
	if maxValue == 0 {
		maxValue = DefaultMaxValueBytes
	}
	if len(secret) == 0 {
		secret = nil
	} else {
		secret = append([]byte(nil), secret...)
	}
	return secret, maxValue, nil
}
