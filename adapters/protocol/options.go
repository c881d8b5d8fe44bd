package protocol

import (
	"log/slog"
	"time"
)

// Defaults used when an option is not given.
const (
	// DefaultMaxValueBytes is the largest value a node sends or accepts
	// (64 MiB). Bindings with a smaller payload limit, such as AWS Lambda,
	// set their own with WithMaxValueBytes.
	DefaultMaxValueBytes = 64 << 20

	// DefaultMaxSkew is how far a signed request's timestamp may lie from
	// the verifying node's clock, in either direction, before the request
	// is rejected as stale.
	DefaultMaxSkew = 30 * time.Second
)

// An Option configures a Server or a Client. The same options are meant to
// be given to both sides of a cluster: every node needs the same secret and
// should use the same size limit.
type Option func(*config)

type config struct {
	secret   []byte
	maxValue int64
	maxSkew  time.Duration
	now      func() time.Time
	logger   *slog.Logger
}

func newConfig(opts []Option) config {
	c := config{maxValue: DefaultMaxValueBytes, maxSkew: DefaultMaxSkew, now: time.Now}
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// WithSecret turns on peer authentication with a shared secret: a Client
// signs every request with it and a Server rejects (401) any request
// without a valid, fresh signature, without loading anything for it. An
// empty secret leaves authentication off. The slice is copied.
func WithSecret(secret []byte) Option {
	s := append([]byte(nil), secret...)
	return func(c *config) {
		if len(s) == 0 {
			c.secret = nil
			return
		}
		c.secret = s
	}
}

// WithMaxValueBytes sets the largest value, in bytes, that a Server sends
// (larger ones are answered with 413) and that a Client reads (it stops
// reading past it and returns ErrTooLarge). n <= 0 means
// DefaultMaxValueBytes.
func WithMaxValueBytes(n int64) Option {
	return func(c *config) {
		if n <= 0 {
			n = DefaultMaxValueBytes
		}
		c.maxValue = n
	}
}

// WithMaxSkew sets how old (or how far in the future) a signed request's
// timestamp may be. d <= 0 means DefaultMaxSkew.
func WithMaxSkew(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			d = DefaultMaxSkew
		}
		c.maxSkew = d
	}
}

// WithClock replaces time.Now for signing and for checking timestamps; it
// is meant for tests. nil means time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			now = time.Now
		}
		c.now = now
	}
}

// WithLogger sets the logger a Server reports rejected requests and load
// errors to. nil (the default) discards the logs.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}
