package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/getter"
)

// The nethttp binding's own HTTP requests and answers, carried as frames
// over one connection per peer: the design a multiplexed option of the
// binding would have, prototyped outside the library. The
// Pool's client and handler are unchanged (so every protocol semantic holds:
// signatures, checksums, limits, 102 Processing); only what carries an
// http.Request to the peer's handler and its answer back differs:
//
//   - muxRT, an http.RoundTripper (PoolOptions.Transport), keeps one TCP
//     connection per peer, opened with an HTTP/1.1 Upgrade to
//     "geecache-mux" on the peer's own port, and sends each request as a
//     frame, many in flight at once;
//   - muxHandler, around the Pool, takes the Upgrade over (Hijack), reads
//     request frames, runs the Pool's ServeHTTP for each on a goroutine of
//     its own into a buffering ResponseWriter, and sends back each answer
//     (and any 1xx) as a frame.
//
// Frame: id uint32, kind uint8 (0 request, 1 interim answer, 2 answer),
// payload length uint32, payload. A request's payload: method, request URI,
// header fields, body; an answer's: status, header fields, body. No limit,
// timeout or stream cap of a real transport: a study, not a design.

const (
	muxUpgrade    = "geecache-mux"
	muxPath       = "/_geecache/mux"
	muxKindReq    = 0
	muxKindInterm = 1
	muxKindAnswer = 2
	muxMaxFrame   = 80 << 20
)

// muxFrame appends a frame's header and returns the payload's start.
func muxFrameStart(b []byte, id uint32, kind byte) []byte {
	b = binary.BigEndian.AppendUint32(b, id)
	b = append(b, kind)
	return binary.BigEndian.AppendUint32(b, 0) // length, set by muxFrameEnd
}

func muxFrameEnd(b []byte) { binary.BigEndian.PutUint32(b[5:9], uint32(len(b)-9)) }

func muxAppendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func muxAppendHeader(b []byte, h http.Header) []byte {
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	for k, vs := range h {
		for _, v := range vs {
			b = muxAppendString(b, k)
			b = muxAppendString(b, v)
		}
	}
	return b
}

var errMuxFrame = errors.New("mux: malformed frame")

// muxParser reads a payload.
type muxParser struct {
	b   []byte
	err error
}

func (p *muxParser) string() string {
	if p.err != nil || len(p.b) < 4 {
		p.err = errMuxFrame
		return ""
	}
	n := int(binary.BigEndian.Uint32(p.b))
	if len(p.b)-4 < n {
		p.err = errMuxFrame
		return ""
	}
	s := string(p.b[4 : 4+n])
	p.b = p.b[4+n:]
	return s
}

func (p *muxParser) header() http.Header {
	if p.err != nil || len(p.b) < 2 {
		p.err = errMuxFrame
		return nil
	}
	n := int(binary.BigEndian.Uint16(p.b))
	p.b = p.b[2:]
	h := make(http.Header, n)
	for range n {
		k := p.string()
		h[k] = append(h[k], p.string())
	}
	return h
}

// muxReadFrame reads one frame.
func muxReadFrame(br *bufio.Reader) (id uint32, kind byte, payload []byte, err error) {
	var hdr [9]byte
	if _, err = io.ReadFull(br, hdr[:]); err != nil {
		return 0, 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[5:])
	if n > muxMaxFrame {
		return 0, 0, nil, errMuxFrame
	}
	payload = make([]byte, n)
	_, err = io.ReadFull(br, payload)
	return binary.BigEndian.Uint32(hdr[:4]), hdr[4], payload, err
}

// muxRT is the client side: an http.RoundTripper with one framed
// connection per host.
type muxRT struct {
	mu    sync.Mutex
	conns map[string]*muxConn
}

type muxConn struct {
	c       net.Conn
	waiting atomic.Int32
	wmu     sync.Mutex
	bw      *bufio.Writer
	buf     []byte // under wmu
	nextID  uint32 // under wmu
	pmu     sync.Mutex
	pending map[uint32]*muxCall
	err     error // under pmu
	done    chan struct{}
}

type muxCall struct {
	req  *http.Request
	resp chan *http.Response // buffered, 1
	err  error               // set before resp is closed
}

func (t *muxRT) conn(ctx context.Context, host string) (*muxConn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if mc := t.conns[host]; mc != nil {
		return mc, nil
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	_, _ = io.WriteString(c, "GET "+muxPath+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: Upgrade\r\nUpgrade: "+muxUpgrade+"\r\n\r\n")
	br := bufio.NewReaderSize(c, 64<<10)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		_ = c.Close()
		return nil, fmt.Errorf("mux: upgrade refused: %v %v", resp, err)
	}
	mc := &muxConn{c: c, bw: bufio.NewWriterSize(c, 64<<10), pending: map[uint32]*muxCall{}, done: make(chan struct{})}
	go mc.read(br, func() {
		t.mu.Lock()
		if t.conns[host] == mc {
			delete(t.conns, host)
		}
		t.mu.Unlock()
	})
	t.conns[host] = mc
	return mc, nil
}

func (mc *muxConn) read(br *bufio.Reader, gone func()) {
	defer close(mc.done)
	var err error
	for {
		var id uint32
		var kind byte
		var payload []byte
		if id, kind, payload, err = muxReadFrame(br); err != nil {
			break
		}
		mc.pmu.Lock()
		call := mc.pending[id]
		if kind == muxKindAnswer {
			delete(mc.pending, id)
		}
		mc.pmu.Unlock()
		if call == nil {
			continue // a caller that left
		}
		p := muxParser{b: payload}
		if len(p.b) < 2 {
			err = errMuxFrame
			break
		}
		code := int(binary.BigEndian.Uint16(p.b))
		p.b = p.b[2:]
		h := p.header()
		if p.err != nil {
			err = p.err
			break
		}
		if kind == muxKindInterm {
			if tr := httptrace.ContextClientTrace(call.req.Context()); tr != nil && tr.Got1xxResponse != nil {
				_ = tr.Got1xxResponse(code, textproto.MIMEHeader(h))
			}
			continue
		}
		call.resp <- &http.Response{Status: strconv.Itoa(code) + " " + http.StatusText(code), StatusCode: code,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, ContentLength: int64(len(p.b)),
			Body: io.NopCloser(bytes.NewReader(p.b)), Request: call.req}
	}
	gone()
	_ = mc.c.Close()
	mc.pmu.Lock()
	mc.err = fmt.Errorf("mux: connection lost: %w", err)
	for id, call := range mc.pending {
		call.err = mc.err
		close(call.resp)
		delete(mc.pending, id)
	}
	mc.pmu.Unlock()
}

func (t *muxRT) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	mc, err := t.conn(ctx, req.URL.Host)
	if err != nil {
		return nil, err
	}
	var body []byte
	if req.Body != nil {
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
	}
	call := &muxCall{req: req, resp: make(chan *http.Response, 1)}
	mc.waiting.Add(1)
	mc.wmu.Lock()
	mc.waiting.Add(-1)
	mc.nextID++
	id := mc.nextID
	mc.pmu.Lock()
	if mc.err != nil {
		mc.pmu.Unlock()
		mc.wmu.Unlock()
		return nil, mc.err
	}
	mc.pending[id] = call
	mc.pmu.Unlock()
	f := muxFrameStart(mc.buf[:0], id, muxKindReq)
	f = muxAppendString(f, req.Method)
	f = muxAppendString(f, req.URL.RequestURI())
	f = muxAppendHeader(f, req.Header)
	f = append(f, body...)
	muxFrameEnd(f)
	mc.buf = f
	_, err = mc.bw.Write(f)
	if err == nil && mc.waiting.Load() == 0 { // the last writer in line flushes for all
		err = mc.bw.Flush()
	}
	mc.wmu.Unlock()
	if err != nil {
		_ = mc.c.Close() // the reader fails every pending call
	}
	select {
	case resp, ok := <-call.resp:
		if !ok {
			return nil, call.err
		}
		return resp, nil
	case <-ctx.Done():
		mc.pmu.Lock()
		delete(mc.pending, id)
		mc.pmu.Unlock()
		return nil, ctx.Err()
	}
}

func (t *muxRT) close() {
	t.mu.Lock()
	conns := t.conns
	t.conns = map[string]*muxConn{}
	t.mu.Unlock()
	for _, mc := range conns {
		_ = mc.c.Close()
		<-mc.done
	}
}

// newOurMuxCluster is newOurClusterProto's cluster with every Pool's
// requests carried by muxRT and every node's Pool behind a muxHandler.
func newOurMuxCluster(tb testing.TB, n int, budget int64, g getter.Getter) *muxTarget {
	_, _, m := newOurMuxClusterOf(tb, n, budget, g)
	return m
}

// newOurMuxClusterOf is newOurMuxCluster, with its nodes and each node's
// muxHandler.
func newOurMuxClusterOf(tb testing.TB, n int, budget int64, g getter.Getter) (*ourCluster, []*muxHandler, *muxTarget) {
	c := &ourCluster{}
	var addrs []string
	for range n {
		ln := listenLoopback(tb)
		addrs = append(addrs, "http://"+ln.Addr().String())
		c.nodes = append(c.nodes, &ourNode{ln: ln, done: make(chan struct{})})
	}
	m := &muxTarget{framed: true}
	var handlers []*muxHandler
	for i, nd := range c.nodes {
		rt := &muxRT{conns: map[string]*muxConn{}}
		nd.pool, nd.reg, nd.group = newGeeNodeOpts(tb, addrs[i], addrs, httpGroup, budget, g,
			&nethttp.PoolOptions{Logger: quietLog(), Transport: rt})
		pc := &protoCounter{h: nd.pool}
		m.counters = append(m.counters, pc)
		mh := &muxHandler{h: pc, conns: map[net.Conn]bool{}}
		handlers = append(handlers, mh)
		nd.srv = nethttp.NewServer("", mh, nil)
		go func() {
			defer close(nd.done)
			_ = nd.srv.Serve(nd.ln)
		}()
		tb.Cleanup(mh.close)
		tb.Cleanup(rt.close)
	}
	tb.Cleanup(c.close)
	m.httpTarget = c.target()
	return c, handlers, m
}
