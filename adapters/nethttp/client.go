package nethttp

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
)

// A Client fetches values from one peer. It implements cache.Peer
// and is safe for concurrent use.
type Client struct {
	addr    string
	prefix  string // addr + base path
	proto   *protocol.Client
	rt      transport
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
	rt      transport
	timeout time.Duration
}

func newClientConfig(opts *ClientOptions) (clientConfig, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	err := peerhttp.CheckBasePath(o.BasePath)
	if err != nil {
		return clientConfig{}, err
	}
	if o.Timeout, err = peerhttp.CheckTimeout(o.Timeout); err != nil {
		return clientConfig{}, err
	}
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: o.Secret, MaxValueBytes: o.MaxValueBytes, Propagator: o.Propagator})
	if err != nil {
		return clientConfig{}, err
	}
	rt, err := o.transport(pc.MaxValueBytes()) // checks the platform
	if err != nil {
		return clientConfig{}, err
	}
	return clientConfig{base: o.BasePath, proto: pc, rt: rt, timeout: o.Timeout}, nil
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

// Do sends req to the peer and gives its answers to reply (cache.Peer):
// a GET, PUT or DELETE for one key, batch requests (a POST each, split
// over the protocol's limits: 1,000 keys or 1 MiB of keys) for many, a
// purge or an offer. A key the peer's source does not have is answered
// with an error wrapping getter.ErrNotFound, with the peer's message;
// another error answer is a *cache.PeerError (status, code, message), and
// an answer that fails the integrity checks wraps cache.ErrIntegrity; a
// peer that cannot be reached yields the net/http error. A peer of an
// older protocol version that cannot batch answers 405, returned as an
// error wrapping errors.ErrUnsupported, so that the group asks key by key.
// Each error names the peer and, like every GeeCache error, starts with
// "geecache: " (a Group that wraps it keeps one). Each request ends when
// ctx does, or after the client's timeout; a peer that stalls, or sends
// its body slowly, never holds Do past that. A value is read with no more
// than twice what has arrived allocated, plus one bounded chunk, whatever
// length the peer announces.
func (c *Client) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return protocol.Do(ctx, (*sender)(c), req, reply)
}

// sender is a Client as the protocol's Sender.
type sender Client

func (s *sender) Get(ctx context.Context, group, key string, peek bool, loading protocol.Listener) ([]byte, time.Duration, error) {
	c := (*Client)(s)
	return c.do(ctx, c.proto.NewRequest(ctx, c.addr, group, key, peek), loading)
}

func (s *sender) Remove(ctx context.Context, group, key string) error {
	c := (*Client)(s)
	_, _, err := c.do(ctx, c.proto.NewRemoveRequest(ctx, c.addr, group, key), nil)
	return err
}

func (s *sender) Set(ctx context.Context, group, key string, value []byte, ttl time.Duration) error {
	c := (*Client)(s)
	_, _, err := c.do(ctx, c.proto.NewSetRequest(ctx, c.addr, group, key, value, ttl), nil)
	return err
}

func (s *sender) Batch(ctx context.Context, group string, op protocol.BatchOp, keys []string, peek bool, loading protocol.Listener, each func(int, []byte, time.Duration, error)) error {
	return (*Client)(s).batch(ctx, group, op, keys, peek, loading, each)
}

// do sends a protocol request and reads its answer.
func (c *Client) do(ctx context.Context, preq protocol.Request, loading protocol.Listener) (v []byte, ttl time.Duration, err error) {
	err = c.exchange(ctx, preq, loading, func(ctx context.Context, resp peerResponse) (err error) {
		v, err = c.proto.ReadResponse(ctx, preq, resp.status, resp.header, resp.size, resp.body)
		ttl = protocol.ResponseTTL(resp.header)
		return err
	})
	if err != nil {
		v = nil
	}
	return v, ttl, err
}

// batch sends one batch request and reads its answer.
func (c *Client) batch(ctx context.Context, group string, op protocol.BatchOp, keys []string, peek bool, loading protocol.Listener, each func(int, []byte, time.Duration, error)) error {
	preq := c.proto.NewBatchRequest(ctx, c.addr, group, op, keys, peek)
	// loading hears the owner's 102: it is loading keys of the batch.
	return c.exchange(ctx, preq, loading, func(ctx context.Context, resp peerResponse) error {
		return c.proto.ReadBatchResponse(ctx, preq, resp.status, resp.header, resp.size, resp.body, keys, each)
	})
}

// exchange sends preq and has read read the answer, within the client's
// timeout; its errors name the peer.
func (c *Client) exchange(ctx context.Context, preq protocol.Request, loading protocol.Listener, read func(context.Context, peerResponse) error) error {
	cancel := context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.timeout {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	defer cancel()
	resp, err := c.roundTrip(ctx, preq, loading)
	if err != nil {
		return fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	// The protocol's reader reads a well-formed body to its end, which
	// hands the connection back for reuse. Whatever it leaves unread (a
	// body longer than announced, a stalled one) is not drained: the
	// request is cancelled first, and closing an unread body closes the
	// connection without waiting for the peer.
	err = read(ctx, resp)
	cancel()
	_ = resp.body.Close()
	if err != nil {
		return fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	return nil
}

// CloseIdleConnections closes the idle keep-alive connections of the
// client's transport (under GOOS=js there are none: the host's fetch()
// keeps them).
func (c *Client) CloseIdleConnections() { peerhttp.CloseIdle(c.rt) }

// A peerResponse is a peer's answer as the transport received it: its
// body is read by the protocol's Client and then closed.
type peerResponse struct {
	status int
	header protocol.Header
	size   int64 // the announced length, or -1
	body   io.ReadCloser
}
