package protocol

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxErrorBody is how much of an error response's body a Client reads for
// the message.
const maxErrorBody = 4 << 10

// A Client is the calling side of the protocol: it builds (and signs)
// requests and turns responses back into values and Go errors. It does no
// I/O; a binding sends the Request and hands the answer to ReadResponse.
// It is safe for concurrent use.
type Client struct {
	cfg ClientOptions
}

// NewClient returns a Client configured by opts (nil for the defaults).
// It fails, with an error wrapping ErrConfig, for options that cannot work.
func NewClient(opts *ClientOptions) (*Client, error) {
	c, err := newClientConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Client{cfg: c}, nil
}

// MaxValueBytes returns the largest value the Client accepts.
func (c *Client) MaxValueBytes() int64 { return c.cfg.MaxValueBytes }

// NewRequest returns the peer request for key in group: method GET, the
// escaped path relative to the peer's base path (the binding prepends the
// peer's base URL), the peer header, with a secret the signature, and
// with a Propagator what ctx carries.
func (c *Client) NewRequest(ctx context.Context, group, key string) Request {
	path := Path(group, key)
	h := http.Header{HeaderPeer: {"1"}}
	if c.cfg.Secret != nil {
		sign(h, c.cfg.Secret, c.cfg.Now(), http.MethodGet, path)
	}
	if c.cfg.Propagator != nil {
		c.cfg.Propagator.Inject(ctx, h)
	}
	return Request{Method: http.MethodGet, Path: path, Header: h}
}

// CheckSize returns an error wrapping ErrTooLarge if a response announcing
// n bytes (its Content-Length; -1 if unknown) would be over the limit.
// Bindings call it before reading a body; ReadResponse also enforces the
// limit while reading.
func (c *Client) CheckSize(n int64) error {
	if n > c.cfg.MaxValueBytes {
		return fmt.Errorf("%w: peer announced %d bytes, the limit is %d", ErrTooLarge, n, c.cfg.MaxValueBytes)
	}
	return nil
}

// ReadResponse turns a response into the value or an error. size is the
// announced body length (-1 if unknown). On 200 it reads at most the size
// limit from body and returns ErrTooLarge (wrapped) for a longer body; on
// an error status it returns the sentinel of errorFor's table wrapped with
// the peer's message: getter.ErrNotFound for a 404 not_found, ErrUnknownGroup
// for a 404 unknown_group, ErrUnauthorized, ErrTooLarge, ErrLoad,
// ErrBadRequest, ErrMethodNotAllowed, and ErrBadResponse for anything else.
// The error's text is the peer's message (the owner's own words for a
// missing key, such as "kkk not exist"). It does not close body.
func (c *Client) ReadResponse(status int, header http.Header, size int64, body io.Reader) ([]byte, error) {
	if status != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
		text := strings.TrimSpace(strings.ToValidUTF8(string(msg), "\uFFFD"))
		if text == "" {
			text = http.StatusText(status)
		}
		return nil, &PeerError{Status: status, Code: Code(header.Get(HeaderError)), Message: text}
	}
	if err := c.CheckSize(size); err != nil {
		return nil, err
	}
	if size >= 0 {
		return readExactly(body, size)
	}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(body, c.cfg.MaxValueBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading value: %w", ErrBadResponse, err)
	}
	if n > c.cfg.MaxValueBytes {
		return nil, fmt.Errorf("%w: value is over the limit of %d bytes", ErrTooLarge, c.cfg.MaxValueBytes)
	}
	return append([]byte{}, buf.Bytes()...), nil
}

// readExactly reads a body announced as size bytes (already checked
// against the limit) into one allocation, and fails if it is shorter or
// longer.
func readExactly(body io.Reader, size int64) ([]byte, error) {
	v := make([]byte, size)
	if n, err := io.ReadFull(body, v); err != nil {
		return nil, fmt.Errorf("%w: got %d bytes, announced %d: %w", ErrBadResponse, n, size, err)
	}
	var extra [1]byte
	if n, _ := io.ReadFull(body, extra[:]); n > 0 {
		return nil, fmt.Errorf("%w: body is longer than the %d bytes announced", ErrBadResponse, size)
	}
	return v, nil
}
