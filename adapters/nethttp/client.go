package nethttp

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/geecache/geecache/adapters/protocol"
)

// DefaultMaxIdleConnsPerHost is the keep-alive pool size per peer of
// NewTransport. net/http's default of 2 makes a busy node open and close a
// TCP connection for most peer requests; this is sized for a few hundred
// concurrent requests per peer.
const DefaultMaxIdleConnsPerHost = 256

// maxDrain is how much of an unread body is drained so that the connection
// can be reused; a longer rest closes the connection instead.
const maxDrain = 64 << 10

// NewTransport returns an http.Transport tuned for peer traffic: up to
// DefaultMaxIdleConnsPerHost idle keep-alive connections per peer, no proxy
// (peer traffic stays inside the cluster), bounded dial and TLS handshake
// times. HTTP/2 is used when a peer is reached over TLS (for example an AWS
// Lambda Function URL); plain http peers use HTTP/1.1 keep-alive, which
// costs less CPU per request.
func NewTransport() *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          0, // no global limit; the per-host one applies
		MaxIdleConnsPerHost:   DefaultMaxIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// A Client fetches values from one peer. It implements cache.PeerGetter
// and is safe for concurrent use.
type Client struct {
	addr    string
	prefix  string // addr + base path, no trailing "/"
	proto   *protocol.Client
	rt      http.RoundTripper
	timeout time.Duration
}

// NewClient returns a Client for the peer at addr, a base URL such as
// "http://10.0.0.2:8001" (a trailing "/" is ignored). Without
// WithTransport it gets a transport of its own from NewTransport; a Pool
// gives all its clients one shared transport. The options that matter are
// WithProtocol, WithBasePath, WithTimeout and WithTransport.
func NewClient(addr string, opts ...Option) *Client {
	c := newConfig(opts)
	return newClient(addr, c, c.transport)
}

func newClient(addr string, c config, rt http.RoundTripper) *Client {
	if rt == nil {
		rt = defaultTransport()
	}
	return &Client{
		addr:   addr,
		prefix: strings.TrimRight(addr, "/") + c.basePath,
		proto:  protocol.NewClient(c.proto...),
		// The transport directly, not an http.Client: the protocol has no
		// redirects to follow (a 3xx is reported as a bad response), and
		// the client's per-request header copying and timers cost a tenth
		// of a peer request's CPU.
		rt:      rt,
		timeout: c.timeout,
	}
}

// Addr returns the peer's address as given to NewClient.
func (c *Client) Addr() string { return c.addr }

// Get fetches key of group from the peer. A key the peer's source does not
// have yields an error wrapping getter.ErrNotFound; protocol errors wrap
// the sentinels of package protocol; a peer that cannot be reached yields
// the net/http error. The request ends when ctx does, or after the
// client's timeout.
func (c *Client) Get(ctx context.Context, group, key string) ([]byte, error) {
	if dl, ok := ctx.Deadline(); c.timeout > 0 && (!ok || time.Until(dl) > c.timeout) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	preq := c.proto.NewRequest(group, key)
	req, err := http.NewRequestWithContext(ctx, preq.Method, c.prefix+preq.Path, nil)
	if err != nil {
		return nil, fmt.Errorf("geecache/nethttp: peer %s: %w", c.addr, err)
	}
	req.Header = preq.Header
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("geecache/nethttp: peer %s: %w", c.addr, err)
	}
	defer func() {
		// Drain what is left (a short rest) so the connection is reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
		_ = resp.Body.Close()
	}()
	v, err := c.proto.ReadResponse(resp.StatusCode, resp.Header, resp.ContentLength, resp.Body)
	if err != nil {
		return nil, fmt.Errorf("geecache/nethttp: peer %s: %w", c.addr, err)
	}
	return v, nil
}

// CloseIdleConnections closes the idle keep-alive connections of the
// client's transport.
func (c *Client) CloseIdleConnections() { closeIdle(c.rt) }

// closeIdle closes rt's idle connections if it keeps any.
func closeIdle(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
