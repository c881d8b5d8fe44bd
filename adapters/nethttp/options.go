package nethttp

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/geecache/geecache/adapters/protocol"
	"github.com/geecache/geecache/picker"
)

// DefaultTimeout bounds one peer request (connect, send, wait, read) when
// WithTimeout is not used. When it expires the calling node loads the key
// itself.
const DefaultTimeout = 10 * time.Second

// An Option configures a Handler, a Client or a Pool.
type Option func(*config)

type config struct {
	proto     []protocol.Option
	basePath  string
	timeout   time.Duration
	transport http.RoundTripper
	logger    *slog.Logger
	picker    []picker.Option
}

func newConfig(opts []Option) config {
	c := config{timeout: DefaultTimeout}
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// protoOpts returns the protocol options, with the logger last unless one
// was given.
func (c *config) protoOpts() []protocol.Option {
	return append([]protocol.Option{protocol.WithLogger(c.logger)}, c.proto...)
}

// WithProtocol passes options to the protocol: protocol.WithSecret to turn
// on peer authentication, protocol.WithMaxValueBytes for the size limit,
// protocol.WithMaxSkew and protocol.WithClock. Give every node the same
// ones.
func WithProtocol(opts ...protocol.Option) Option {
	return func(c *config) { c.proto = append(c.proto, opts...) }
}

// WithBasePath mounts the protocol under an escaped path prefix such as
// "/cache": a Handler serves base+"/_geecache/...", and a Client or Pool
// requests peer+base+"/_geecache/...". A trailing "/" is ignored. The
// default is "" (the protocol at the root).
func WithBasePath(base string) Option {
	for len(base) > 0 && base[len(base)-1] == '/' {
		base = base[:len(base)-1]
	}
	return func(c *config) { c.basePath = base }
}

// WithTimeout sets the per-request timeout of a Client (DefaultTimeout if
// not set; d <= 0 means no timeout beyond the caller's context).
func WithTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// WithTransport sets the RoundTripper a Client or Pool sends requests with,
// instead of a transport from NewTransport. A Pool does not close idle
// connections of a transport it was given, except through Close.
func WithTransport(rt http.RoundTripper) Option {
	return func(c *config) { c.transport = rt }
}

// WithLogger sets where rejected requests, load errors and (at debug
// level) a Pool's choice of owners are logged. The default discards logs.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithPicker passes options (replicas, hash) to a Pool's consistent-hash
// ring. Every node must use the same ones.
func WithPicker(opts ...picker.Option) Option {
	return func(c *config) { c.picker = append(c.picker, opts...) }
}
