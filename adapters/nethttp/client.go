package nethttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"time"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/internal/progress"
)

// maxConnsPerPeer bounds the connections NewTransport opens to one peer, so
// that a slow or hung peer cannot make a node open connections without
// bound; a request over it waits for a connection, within its deadline.
const maxConnsPerPeer = 2 * peerhttp.MaxIdleConnsPerHost

// NewTransport returns an http.Transport tuned for peer traffic: up to
// 256 idle keep-alive connections per peer (net/http's default of 2 would
// open and close a connection for most peer requests), at most 512
// connections per peer in all (a group also caps its
// requests in flight to a peer: cache.PeerPolicy.MaxInFlight), no proxy
// (peer traffic stays inside the cluster), bounded dial and TLS handshake
// times. HTTP/2 is used when a peer is reached over TLS (for example an AWS
// Lambda Function URL); plain http peers use HTTP/1.1 keep-alive, which
// costs less CPU per request.
func NewTransport() *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          0, // no global limit; the per-host one applies
		MaxIdleConnsPerHost:   peerhttp.MaxIdleConnsPerHost,
		MaxConnsPerHost:       maxConnsPerPeer,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// A Client fetches values from one peer. It implements cache.PeerGetter
// and is safe for concurrent use.
type Client struct {
	addr    string
	prefix  string // addr + base path
	proto   *protocol.Client
	rt      http.RoundTripper
	timeout time.Duration
}

// NewClient returns a Client for the peer at addr, a base URL such as
// "http://10.0.0.2:8001", normalised as Pool.Set does. opts may be nil for
// the defaults. It fails, with an error wrapping cache.ErrConfig, for a
// URL or options that cannot work.
func NewClient(addr string, opts *ClientOptions) (*Client, error) {
	addr, err := peerhttp.NormalizeURL(addr)
	if err != nil {
		return nil, err
	}
	cc, err := newClientConfig(opts)
	if err != nil {
		return nil, err
	}
	return cc.client(addr), nil
}

// clientConfig is ClientOptions checked, with defaults filled in, ready to
// make the clients of any number of peers.
type clientConfig struct {
	base    string
	proto   *protocol.Client // stateless: shared by all peers
	rt      http.RoundTripper
	timeout time.Duration
}

func newClientConfig(opts *ClientOptions) (clientConfig, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if err := checkBasePath(o.BasePath); err != nil {
		return clientConfig{}, err
	}
	switch {
	case o.Timeout < 0:
		return clientConfig{}, fmt.Errorf("geecache: %w: Timeout %v is negative", cache.ErrConfig, o.Timeout)
	case o.Timeout == 0:
		o.Timeout = peerhttp.Timeout
	}
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: o.Secret, MaxValueBytes: o.MaxValueBytes, Propagator: o.Propagator})
	if err != nil {
		return clientConfig{}, err
	}
	if err := checkPlatform(o.Transport); err != nil {
		return clientConfig{}, err
	}
	if o.Transport == nil {
		o.Transport = defaultTransport(pc.MaxValueBytes())
	}
	return clientConfig{base: o.BasePath, proto: pc, rt: o.Transport, timeout: o.Timeout}, nil
}

// client returns the Client of the peer at addr, already normalised.
func (cc clientConfig) client(addr string) *Client {
	return &Client{
		addr:   addr,
		prefix: addr + cc.base,
		proto:  cc.proto,
		// The transport directly, not an http.Client: the protocol has no
		// redirects to follow (a 3xx is reported as a bad response), and
		// the client's per-request header copying and timers cost a tenth
		// of a peer request's CPU.
		rt:      cc.rt,
		timeout: cc.timeout,
	}
}

// Addr returns the peer's address, normalised.
func (c *Client) Addr() string { return c.addr }

// Get fetches key of group from the peer, with the lifetime the owner
// gives the value, or with a "not found" how long that answer may be
// cached (0: none). A key the peer's source does not have yields an error
// wrapping getter.ErrNotFound, with the peer's message; another error
// answer is a *cache.PeerError (status, code, message), and an answer that
// fails the integrity checks wraps cache.ErrIntegrity; a peer that cannot
// be reached yields the net/http error. Each error names the peer and,
// like every GeeCache error, starts with "geecache: " (a Group that wraps
// it keeps one). The request ends when ctx does, or after the client's
// timeout; a peer that stalls, or sends its body slowly, never holds Get
// past that. Get allocates no more than twice what has arrived, plus one
// bounded chunk, whatever length the peer announces.
func (c *Client) Get(ctx context.Context, group, key string) ([]byte, time.Duration, error) {
	return c.do(ctx, c.proto.NewRequest(ctx, c.addr, group, key))
}

// Remove makes the peer drop key of group from its memory, for
// Group.Remove.
func (c *Client) Remove(ctx context.Context, group, key string) error {
	_, _, err := c.do(ctx, c.proto.NewRemoveRequest(ctx, c.addr, group, key))
	return err
}

// Set makes the peer, the owner of key, store value for ttl (0: its
// group's default), for Group.Set.
func (c *Client) Set(ctx context.Context, group, key string, value []byte, ttl time.Duration) error {
	_, _, err := c.do(ctx, c.proto.NewSetRequest(ctx, c.addr, group, key, value, ttl))
	return err
}

// do sends a protocol request and reads its answer.
func (c *Client) do(ctx context.Context, preq protocol.Request) ([]byte, time.Duration, error) {
	cancel := context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.timeout {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	defer cancel()
	var body io.Reader
	if preq.Body != nil {
		body = bytes.NewReader(preq.Body)
	}
	rctx := ctx
	if preq.Method == http.MethodGet && progress.Wanted(ctx) {
		rctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
			if code == http.StatusProcessing {
				progress.Report(ctx) // the owner is loading: the asking group waits for it
			}
			return nil
		}})
	}
	req, err := http.NewRequestWithContext(rctx, preq.Method, c.prefix+preq.Path, body)
	if err != nil {
		return nil, 0, fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	req.Header = preq.Header
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return nil, 0, fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	// ReadResponse reads a well-formed body to its end, which hands the
	// connection back for reuse. Whatever it leaves unread (a body longer
	// than announced, a stalled one) is not drained: the request is
	// cancelled first, and closing an unread body closes the connection
	// without waiting for the peer.
	v, err := c.proto.ReadResponse(ctx, preq, resp.StatusCode, resp.Header, resp.ContentLength, resp.Body)
	cancel()
	_ = resp.Body.Close()
	ttl := protocol.ResponseTTL(resp.Header)
	if err != nil {
		return nil, ttl, fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	return v, ttl, nil
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
