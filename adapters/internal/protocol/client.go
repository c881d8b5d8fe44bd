package protocol

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Bounds of what a Client reads.
const (
	// maxErrorBody is how much of an error response's body a Client reads
	// for the message; a version 2 server never sends more.
	maxErrorBody = 4 << 10
	// chunkSize is the size of the pooled buffers a value whose announced
	// size is unknown or at least chunkSize is read into, as it arrives.
	// A smaller announced size is allocated at once: a peer that lies
	// about it costs at most chunkSize.
	chunkSize = 32 << 10
)

// A chunk is one pooled read buffer.
type chunk = [chunkSize]byte

// A Client is the calling side of the protocol: it builds (and signs)
// requests and turns responses back into values and Go errors, after
// checking their integrity. It does no I/O; a binding sends the Request
// and hands the answer to ReadResponse. It is safe for concurrent use.
type Client struct {
	cfg    ClientOptions
	chunks sync.Pool // of *chunk
	peer   []string  // HeaderPeer's value, shared by all requests (never modified)
	// get and peek are the whole header of a GET and of a memory-only GET
	// when a request adds nothing of its own to it (no secret, no
	// Propagator): shared by all those requests, never modified; nil
	// otherwise.
	get, peek Header
	macs      *macs // the secret's; nil without one
}

// NewClient returns a Client configured by opts (nil for the defaults).
// It fails, with an error wrapping cache.ErrConfig, for options that cannot work.
func NewClient(opts *ClientOptions) (*Client, error) {
	c, err := newClientConfig(opts)
	if err != nil {
		return nil, err
	}
	cl := &Client{cfg: c, chunks: sync.Pool{New: func() any { return new(chunk) }}, peer: []string{"1"}}
	if c.Secret != nil {
		cl.macs = newMACs(c.Secret)
	}
	if c.Secret == nil && c.Propagator == nil {
		cl.get, cl.peek = Header{HeaderPeer: cl.peer}, Header{HeaderPeer: peerMemory}
	}
	return cl, nil
}

// MaxValueBytes returns the largest value the Client accepts.
func (c *Client) MaxValueBytes() int64 { return c.cfg.MaxValueBytes }

// peerMemory is HeaderPeer's value on a memory-only request (never
// modified).
var peerMemory = []string{PeerMemoryOnly}

// NewRequest returns the peer request for key in group to the node whose
// base URL is target: method GET, the escaped path relative to the peer's
// base path (the binding prepends the peer's base URL), the peer header,
// with a secret the signature (bound to target, which must be the node's
// base URL exactly as it knows itself; see ServerOptions.Self), and with a
// Propagator what ctx carries. With peek it is a memory-only request
// (HeaderPeer PeerMemoryOnly). The header's map is the request's own (a
// user's RoundTripper may add to it), but its values may be shared with
// the Client: a binding may replace them, never modify them in place.
func (c *Client) NewRequest(ctx context.Context, target, group, key string, peek bool) Request {
	path := Path(group, key)
	h := Header{HeaderPeer: c.peer}
	if peek {
		h[HeaderPeer] = peerMemory
	}
	return c.request(ctx, methodGet, target, path, h, nil)
}

// request is the last step of every request a Client makes: it signs h
// (with a secret) and injects ctx's trace into it.
func (c *Client) request(ctx context.Context, method, target, path string, h Header, body []byte) Request {
	if c.cfg.Secret != nil {
		sign(h, c.macs, time.Now(), method, target, path)
	}
	if c.cfg.Propagator != nil {
		c.cfg.Propagator.Inject(ctx, h)
	}
	return Request{Method: method, Path: path, Header: h, Body: body}
}

// CheckSize returns an error wrapping ErrTooLarge if a response announcing
// n bytes (its Content-Length; -1 if unknown) would be over the limit.
// ReadResponse calls it before reading a body.
func (c *Client) CheckSize(n int64) error {
	if n > c.cfg.MaxValueBytes {
		return fmt.Errorf("%w: peer announced %d bytes, the limit is %d", ErrTooLarge, n, c.cfg.MaxValueBytes)
	}
	return nil
}

// ReadResponse turns the response to req into the value or an error. size
// is the announced body length (-1 if unknown).
//
// It checks the response's integrity first (see PROTOCOL.md, version 2):
// a 200 must carry a checksum that matches the value, and with a secret
// every response must carry a valid signature bound to req; an answer that
// fails is an error wrapping ErrIntegrity (and ErrBadResponse), never a
// value or a "not found".
//
// On 200 it reads the value as it arrives, allocating no more than twice
// what has arrived plus one bounded chunk whatever size is announced, and
// at most the size limit (ErrTooLarge for more); a body shorter or longer
// than announced is ErrBadResponse. On an error status it reads at most
// 4 KiB of the body and returns the sentinel of the status and code
// wrapped with the peer's message: getter.ErrNotFound for a 404
// not_found, ErrUnknownGroup for a 404 unknown_group, ErrUnauthorized,
// ErrTooLarge, ErrLoad, ErrBadRequest, ErrMethodNotAllowed, and
// ErrBadResponse for anything else. The error's text is the peer's
// message (the owner's own words for a missing key, such as "kkk not
// exist").
//
// A failed read returns an error wrapping the reader's error. ReadResponse
// stops between chunks when ctx is done, but a read that blocks ends only
// when body does: a binding must make body fail when ctx ends (net/http
// does for a request made with ctx). It does not close body.
func (c *Client) ReadResponse(ctx context.Context, req Request, status int, header Header, size int64, body io.Reader) ([]byte, error) {
	if err := c.checkHeader(req, status, header); err != nil {
		return nil, err
	}
	if status != statusOK {
		return nil, c.readError(req, status, header, body)
	}
	if err := c.CheckSize(size); err != nil {
		return nil, err
	}
	v, err := c.readValue(ctx, size, body)
	if err != nil {
		return nil, err
	}
	if err := checkBody(c.cfg.Secret, header, v); err != nil {
		return nil, err
	}
	return v, nil
}

// readError reads an error response's body, at most maxErrorBody bytes,
// and returns its error.
func (c *Client) readError(req Request, status int, header Header, body io.Reader) error {
	msg, err := io.ReadAll(io.LimitReader(body, maxErrorBody+1))
	if err != nil {
		return fmt.Errorf("%w: reading the body of a %d response: %w", ErrBadResponse, status, err)
	}
	if len(msg) > maxErrorBody {
		if Field(header, HeaderChecksum) != "" {
			return fmt.Errorf("%w: error body over %d bytes", ErrBadResponse, maxErrorBody)
		}
		msg = msg[:maxErrorBody] // a version 1 peer: its message is cut
	} else if err := checkBody(c.cfg.Secret, header, msg); err != nil {
		if status == statusUnauthorized {
			// A node with another secret (or none) sums its answers
			// another way: still, it refused the request.
			return fmt.Errorf("%w (%w)", ErrUnauthorized, err)
		}
		return err
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(msg), "\uFFFD"))
	if text == "" {
		text = statusText(status)
	}
	return NewPeerError(status, Code(Field(header, HeaderError)), text)
}

// A WholeBody is a body that has arrived whole, in a buffer of its own
// that nothing else holds (the multiplexed carriage of net/http reads
// each frame so): TakeBody hands that buffer over, once, so that a value
// is not copied again on its way to the cache. The body is empty after.
type WholeBody interface {
	io.Reader
	TakeBody() []byte
}

// readValue reads a value announced as size bytes (-1 if unknown, else
// already checked against the limit). A size under chunkSize is read into
// one exact allocation. Anything else is read into pooled chunks as it
// arrives; once half of an announced size has arrived, the value gets its
// exact allocation, the chunks are copied into it and the rest is read in
// place (so a peer that announces more than it sends costs at most twice
// what it sent, and an honest one half a copy); a value of unknown size is
// copied from its chunks at the end.
func (c *Client) readValue(ctx context.Context, size int64, body io.Reader) ([]byte, error) {
	if wb, ok := body.(WholeBody); ok {
		if v := wb.TakeBody(); int64(len(v)) == size {
			return v, nil // already in its own buffer, of the announced size
		}
		return nil, fmt.Errorf("%w: a body not of the announced %d bytes", ErrBadResponse, size)
	}
	if size >= 0 && size < chunkSize {
		v := make([]byte, size)
		if n, err := io.ReadFull(body, v); err != nil {
			return nil, fmt.Errorf("%w: got %d bytes, announced %d: %w", ErrBadResponse, n, size, err)
		}
		return v, checkEnd(body, size)
	}
	want := size // read exactly this much, then check the end
	if size < 0 {
		want = c.cfg.MaxValueBytes + 1 // read up to one byte over the limit
	}
	var local [8]*chunk
	chunks := local[:0]
	defer func() {
		for _, ch := range chunks {
			c.chunks.Put(ch)
		}
	}()
	var total int64
	for total < want {
		if size >= 0 && 2*total >= size {
			return readRest(ctx, size, body, chunks, total)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%w: reading value: %w", ErrBadResponse, err)
		}
		ch := c.chunks.Get().(*chunk)
		chunks = append(chunks, ch)
		n, err := io.ReadFull(body, ch[:min(int64(chunkSize), want-total)])
		total += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: got %d bytes, reading value: %w", ErrBadResponse, total, err)
		}
	}
	switch {
	case total > c.cfg.MaxValueBytes:
		return nil, fmt.Errorf("%w: value is over the limit of %d bytes", ErrTooLarge, c.cfg.MaxValueBytes)
	case size >= 0 && total < size:
		return nil, fmt.Errorf("%w: got %d bytes, announced %d", ErrBadResponse, total, size)
	case size >= 0:
		if err := checkEnd(body, size); err != nil {
			return nil, err
		}
	}
	return gather(chunks, total), nil
}

// gather copies the first total bytes held in chunks (all full but the
// last) into one exact allocation.
func gather(chunks []*chunk, total int64) []byte {
	v := make([]byte, total)
	for i, ch := range chunks {
		copy(v[i*chunkSize:], ch[:])
	}
	return v
}

// readRest reads the rest of a value announced as size bytes, of which
// total have arrived in chunks, into the value's own allocation, a chunk's
// length at a time.
func readRest(ctx context.Context, size int64, body io.Reader, chunks []*chunk, total int64) ([]byte, error) {
	v := gather(chunks, size)
	for total < size {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%w: reading value: %w", ErrBadResponse, err)
		}
		n, err := io.ReadFull(body, v[total:min(total+chunkSize, size)])
		total += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("%w: got %d bytes, announced %d", ErrBadResponse, total, size)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: got %d bytes, reading value: %w", ErrBadResponse, total, err)
		}
	}
	return v, checkEnd(body, size)
}

// checkEnd fails if body, of which the announced size bytes have been
// read, has more.
func checkEnd(body io.Reader, size int64) error {
	var extra [1]byte
	if n, _ := io.ReadFull(body, extra[:]); n > 0 {
		return fmt.Errorf("%w: body is longer than the %d bytes announced", ErrBadResponse, size)
	}
	return nil
}
