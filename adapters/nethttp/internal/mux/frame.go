//go:build !js && !wasip1

package mux

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"time"
)

// The multiplexed carriage (PoolOptions.Multiplex): a node's HTTP requests
// to a peer and the peer's answers, as frames over one connection per
// peer. The connection is opened as HTTP/1.1 on the peer's own port and
// switched over with an Upgrade to Protocol at BasePath+Path; a node
// that does not know it answers without a 101 and is asked over HTTP/1.1.
// A frame carries one HTTP request or answer as it is (method, escaped
// path and header fields; status and header fields; the body), so the
// Pool's own client and handler sign, check and limit it as they do over
// HTTP/1.1.
//
// Frame: a header of 9 bytes (payload length uint32, kind byte, request
// id uint32, big-endian), then the payload. The payload of a request, an
// answer and an interim answer starts with the length (uint32) of its
// head, then the head, then the body. A request's head: method and
// path (each a uint16 length and its bytes), then the header fields; an
// answer's: status (uint16), then the fields. Fields: a count (uint16),
// then name and value of each (uint16 length and bytes). A cancel frame
// (from the asking node: the caller has gone) has no payload.
//
// A go-away frame (from the serving node, which stops: a Server's
// shutdown, a Pool's Close or the end of its drain) carries the highest
// request id it took (uint32); it answers those, takes none after them,
// and the asking node sends them, and every new request, elsewhere. It is
// sent only to an asking node that named GoAway in the Features
// field of its upgrade: to an older one, an unknown kind ends the
// connection. A node that asks sends its request ids in increasing order
// and stops using a connection before they wrap (muxMaxID).
const (
	Protocol = "geecache-mux"
	Path     = "/_geecache/mux"

	KindRequest = 0
	KindInterim = 1 // a 1xx, 102 Processing: the owner is loading
	KindAnswer  = 2
	KindCancel  = 3
	KindGoAway  = 4

	// Features is the field of the upgrade request that lists what
	// the asking node understands beyond the first version of the
	// carriage; GoAway is its token for the go-away frame, and
	// Interims for a 102 repeated while a load runs (a node without it
	// takes at most 5 per request, and is sent one).
	Features = "X-Geecache-Mux"
	GoAway   = "goaway"
	Interims = "interims"

	// muxMaxID is the last request id a connection sends: then it takes
	// no new request and closes once its last answer is in, so that ids
	// never wrap and a go-away's id is never ambiguous.
	muxMaxID = 1<<31 - 1

	// muxMaxRetries is how many times a request a peer did not take (it
	// went away first) is sent again over a new multiplexed connection;
	// after that it goes over HTTP/1.1.
	muxMaxRetries = 2

	// muxLinger bounds how long a serving node that went away waits,
	// after its last answer, for the asking node to close the connection
	// (closing it at once, with the asking node's late frames unread,
	// would reset the connection and could lose the last answers).
	muxLinger = 2 * time.Second

	FrameHeader = 9

	// muxMaxHead bounds the head of a frame, as a Server's
	// MaxHeaderBytes bounds an HTTP request's header (both sides of the
	// carriage must agree on it).
	muxMaxHead = 16 << 10

	// MaxInFlight caps the requests in flight on one connection: the
	// asking node waits for a slot beyond it, and the serving one reads no
	// more frames until one ends.
	MaxInFlight = 256

	// muxIdleTimeout closes a connection nothing has used for so long, on
	// the asking side; the serving side waits as long as an HTTP/1.1
	// keep-alive connection (serverIdleTimeout).
	muxIdleTimeout = 60 * time.Second

	// muxRetryUpgrade is how long the asking node keeps asking a peer that
	// refused the upgrade (an older node) over HTTP/1.1 before it tries
	// again.
	muxRetryUpgrade = time.Minute

	// muxPreAlloc bounds the buffer the asking node allocates for an
	// answer frame before its bytes arrive: past it, the buffer grows with
	// what arrives, so a peer that announces a long frame and stalls costs
	// what it sent. A connection reads one frame at a time, and there is
	// one connection per peer, so this is at most once per peer.
	muxPreAlloc = 4 << 20

	// muxServerPreAlloc is muxPreAlloc for the serving node, which any
	// caller can open connections to (up to ServerOptions.MaxConns) and
	// which reads some bodies from any caller (a batch of reads needs no
	// signature): the few bodies it reads (a PUT's value, a batch's keys;
	// the handler refuses the others on their head, and they are skipped)
	// grow from it, so that a frame announced and not sent costs what
	// arrived.
	muxServerPreAlloc = 64 << 10

	// muxBufSize is the size of a connection's read buffer and of its
	// write buffer, at either end.
	muxBufSize = 64 << 10
)

// ErrFrame is what a connection fails with when its peer sends a frame
// that breaks the format or a limit.
var ErrFrame = errors.New("geecache: multiplexed connection: malformed frame")

// muxMaxFrame returns the largest payload a frame may have: a head and a
// value of at most maxValue bytes.
func muxMaxFrame(maxValue int64) int64 { return 4 + muxMaxHead + maxValue }

// StartFrame appends a frame header (its length set by SetLen) and the
// place of the head's length.
func StartFrame(b []byte, kind byte, id uint32) []byte {
	b = binary.BigEndian.AppendUint32(b, 0)
	b = append(b, kind)
	b = binary.BigEndian.AppendUint32(b, id)
	return binary.BigEndian.AppendUint32(b, 0)
}

// EndHead records the length of the head that b, started by StartFrame,
// now holds.
func EndHead(b []byte) {
	binary.BigEndian.PutUint32(b[FrameHeader:], uint32(len(b)-FrameHeader-4))
}

// SetLen records the frame's payload length: what b holds after the
// frame header plus bodyLen bytes to follow.
func SetLen(b []byte, bodyLen int) {
	binary.BigEndian.PutUint32(b, uint32(len(b)-FrameHeader+bodyLen))
}

// AppendString appends s with its length.
func AppendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// AppendFields appends h's fields; it fails if they do not fit a head.
func AppendFields(b []byte, h http.Header) ([]byte, error) {
	n := 0
	for k, vs := range h {
		n += len(vs)
		for _, v := range vs {
			if len(k)+len(v) > muxMaxHead {
				return b, fmt.Errorf("geecache: header field %s is too long for a frame", k)
			}
		}
	}
	if n > 0xffff {
		return b, errors.New("geecache: too many header fields for a frame")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	for k, vs := range h {
		for _, v := range vs {
			b = AppendString(b, k)
			b = AppendString(b, v)
		}
	}
	return b, nil
}

// A Head reads the head of a frame. Its strings share one allocation,
// the head's.
type Head struct {
	s   string
	Err error // the first read past the head or its format: ErrFrame
}

// Uint16, Text and Fields read the next number, string and header fields.
func (p *Head) Uint16() int {
	if p.Err != nil || len(p.s) < 2 {
		p.Err = ErrFrame
		return 0
	}
	n := int(p.s[0])<<8 | int(p.s[1])
	p.s = p.s[2:]
	return n
}

func (p *Head) Text() string {
	n := p.Uint16()
	if p.Err != nil || len(p.s) < n {
		p.Err = ErrFrame
		return ""
	}
	v := p.s[:n]
	p.s = p.s[n:]
	return v
}

func (p *Head) Fields() http.Header {
	n := p.Uint16()
	if p.Err != nil || n > len(p.s)/4 { // each field takes 4 bytes at least
		p.Err = ErrFrame
		return nil
	}
	h := make(http.Header, n)
	for range n {
		k, v := p.Text(), p.Text()
		if p.Err != nil {
			return nil
		}
		k = textproto.CanonicalMIMEHeaderKey(k) // no copy if it already is
		h[k] = append(h[k], v)
	}
	if len(p.s) != 0 {
		p.Err = ErrFrame
	}
	return h
}

// Split splits a payload into its head and body.
func Split(payload []byte) (head Head, body []byte, err error) {
	if len(payload) < 4 {
		return Head{}, nil, ErrFrame
	}
	n := binary.BigEndian.Uint32(payload)
	if n > muxMaxHead || int64(n) > int64(len(payload)-4) {
		return Head{}, nil, ErrFrame
	}
	return Head{s: string(payload[4 : 4+n])}, payload[4+n:], nil
}

// muxReadHead reads the start of a payload of n bytes, the head's length
// and the head (through buf, which it returns for reuse), and returns the
// head and the length of the body that follows; ReadPayload reads that
// body into a buffer of its own, which becomes the value (muxBody).
func muxReadHead(br *bufio.Reader, n int64, buf []byte) (head Head, bodyLen int64, _ []byte, err error) {
	if n < 4 {
		return Head{}, 0, buf, ErrFrame
	}
	var l [4]byte
	if _, err := io.ReadFull(br, l[:]); err != nil {
		return Head{}, 0, buf, err
	}
	hn := int64(binary.BigEndian.Uint32(l[:]))
	if hn > muxMaxHead || hn > n-4 {
		return Head{}, 0, buf, ErrFrame
	}
	if int64(cap(buf)) < hn {
		buf = make([]byte, hn)
	}
	buf = buf[:hn]
	if _, err := io.ReadFull(br, buf); err != nil {
		return Head{}, 0, buf, err
	}
	return Head{s: string(buf)}, n - 4 - hn, buf, nil
}

// A muxBody is the body of a frame, read whole into a buffer of its own:
// the protocol's reader takes that buffer as the value (TakeBody, see
// protocol.WholeBody) instead of copying it.
type muxBody struct{ b []byte }

func (m *muxBody) Read(p []byte) (int, error) {
	if len(m.b) == 0 {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(p, m.b)
	m.b = m.b[n:]
	return n, nil
}

func (m *muxBody) Close() error { return nil }

// TakeBody returns the unread body and leaves m empty.
func (m *muxBody) TakeBody() []byte {
	b := m.b
	m.b = nil
	return b
}

// ReadHeader reads a frame header.
func ReadHeader(br *bufio.Reader) (n int64, kind byte, id uint32, err error) {
	hdr, err := br.Peek(FrameHeader)
	if err != nil {
		if len(hdr) > 0 && err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, 0, err
	}
	n = int64(binary.BigEndian.Uint32(hdr))
	kind = hdr[4]
	id = binary.BigEndian.Uint32(hdr[5:])
	_, _ = br.Discard(FrameHeader)
	return n, kind, id, nil
}

// ReadPayload reads a payload of n bytes (already checked against the
// limit): into one allocation up to muxPreAlloc, past it into a buffer
// that grows as the bytes arrive.
func ReadPayload(br *bufio.Reader, n int64) ([]byte, error) {
	return muxReadPayloadFrom(br, n, muxPreAlloc)
}

// muxReadPayloadFrom is ReadPayload with preAlloc for muxPreAlloc.
func muxReadPayloadFrom(br *bufio.Reader, n, preAlloc int64) ([]byte, error) {
	if n <= preAlloc {
		b := make([]byte, n)
		_, err := io.ReadFull(br, b)
		return b, err
	}
	b := make([]byte, 0, preAlloc)
	for int64(len(b)) < n {
		if len(b) == cap(b) { // grow: at most twice what has arrived
			nb := make([]byte, len(b), min(2*int64(cap(b)), n))
			copy(nb, b)
			b = nb
		}
		end := min(int64(cap(b)), n)
		m, err := io.ReadFull(br, b[len(b):end])
		b = b[:len(b)+m]
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}
