//go:build !js && !wasip1

package nethttp

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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
)

// A muxTransport is the RoundTripper of a Pool with Multiplex: it sends the
// requests to each plain-http peer over one multiplexed connection (see
// mux_frame.go), opened on the first request, and those to a peer that
// refused the upgrade, or over https, through fallback.
type muxTransport struct {
	fallback http.RoundTripper
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	base     string        // Cluster.BasePath
	maxFrame int64         // the largest answer payload read
	timeout  time.Duration // bounds the dial and upgrade, a stalled frame and a blocked write

	mu      sync.Mutex
	conns   map[string]*muxConn  // by host
	dialing map[string]*muxDial  // by host: the dial one caller makes for all
	refused map[string]time.Time // by host: when the peer refused the upgrade
}

// muxDial is a dial in progress; done is closed when mc or err is set.
type muxDial struct {
	done    chan struct{}
	mc      *muxConn
	refused bool
	err     error
}

func newMuxTransport(fallback http.RoundTripper, base string, maxValue int64, timeout time.Duration) *muxTransport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	t := &muxTransport{fallback: fallback, dial: d.DialContext, base: base, maxFrame: muxMaxFrame(maxValue), timeout: timeout,
		conns: map[string]*muxConn{}, dialing: map[string]*muxDial{}, refused: map[string]time.Time{}}
	if ht, ok := fallback.(*http.Transport); ok && ht.DialContext != nil {
		t.dial = ht.DialContext // the transport's own way to peers
	}
	return t
}

// RoundTrip sends req over the peer's multiplexed connection, or through
// the fallback transport if the peer does not speak it.
func (t *muxTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		return t.fallback.RoundTrip(req)
	}
	mc, err := t.conn(req.Context(), req.URL.Host)
	if err != nil {
		return nil, err
	}
	if mc == nil {
		return t.fallback.RoundTrip(req)
	}
	return mc.roundTrip(req)
}

// conn returns host's connection, dialling it if there is none; nil (and
// no error) if host is to be asked over HTTP/1.1.
func (t *muxTransport) conn(ctx context.Context, host string) (*muxConn, error) {
	t.mu.Lock()
	if mc := t.conns[host]; mc != nil {
		t.mu.Unlock()
		return mc, nil
	}
	if at, ok := t.refused[host]; ok {
		if time.Since(at) < muxRetryUpgrade {
			t.mu.Unlock()
			return nil, nil
		}
		delete(t.refused, host)
	}
	d := t.dialing[host]
	if d == nil {
		d = &muxDial{done: make(chan struct{})}
		t.dialing[host] = d
		// The dial serves every caller waiting for it: it is not ended
		// by this caller's context, only by the transport's timeout.
		go t.dialMux(context.WithoutCancel(ctx), host, d)
	}
	t.mu.Unlock()
	select {
	case <-d.done:
		return d.mc, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dialMux opens a connection to host, asks for the upgrade and records
// the outcome in d.
func (t *muxTransport) dialMux(ctx context.Context, host string, d *muxDial) {
	ctx, cancel := context.WithTimeout(ctx, min(t.timeout, peerhttp.Timeout))
	defer cancel()
	mc, refused, err := t.open(ctx, host)
	t.mu.Lock()
	delete(t.dialing, host)
	switch {
	case refused:
		t.refused[host] = time.Now()
	case err == nil:
		t.conns[host] = mc
	}
	d.mc, d.refused, d.err = mc, refused, err
	t.mu.Unlock()
	close(d.done)
}

// open dials host and upgrades the connection; refused reports that the
// peer answered without switching (an older node).
func (t *muxTransport) open(ctx context.Context, host string) (mc *muxConn, refused bool, err error) {
	c, err := t.dial(ctx, "tcp", host)
	if err != nil {
		return nil, false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	_, err = io.WriteString(c, "GET "+t.base+muxPath+" HTTP/1.1\r\nHost: "+host+
		"\r\nConnection: Upgrade\r\nUpgrade: "+muxProtocol+"\r\n\r\n")
	br := bufio.NewReaderSize(c, 64<<10)
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(br, nil)
	}
	if err != nil {
		_ = c.Close()
		return nil, false, fmt.Errorf("multiplexed connection: upgrade: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || !strings.EqualFold(resp.Header.Get("Upgrade"), muxProtocol) {
		_ = resp.Body.Close()
		_ = c.Close()
		return nil, true, nil
	}
	if !stop() {
		_ = c.Close()
		return nil, false, fmt.Errorf("multiplexed connection: upgrade: %w", ctx.Err())
	}
	_ = c.SetDeadline(time.Time{})
	mc = &muxConn{t: t, host: host, c: c, bw: bufio.NewWriterSize(c, 64<<10), slots: make(chan struct{}, muxMaxInFlight),
		calls: map[uint32]*muxCall{}, done: make(chan struct{})}
	mc.idle = time.AfterFunc(muxIdleTimeout, mc.idleCheck)
	go mc.read(br)
	return mc, false, nil
}

// CloseIdleConnections closes the fallback transport's idle connections
// and every multiplexed one: at once if it has no request in flight, else
// when its last one ends. New requests open new connections.
func (t *muxTransport) CloseIdleConnections() {
	closeIdle(t.fallback)
	t.mu.Lock()
	conns := t.conns
	t.conns = map[string]*muxConn{}
	clear(t.refused)
	t.mu.Unlock()
	for _, mc := range conns {
		mc.closeWhenIdle()
	}
}

// forget removes mc from the connections new requests use.
func (t *muxTransport) forget(mc *muxConn) {
	t.mu.Lock()
	if t.conns[mc.host] == mc {
		delete(t.conns, mc.host)
	}
	t.mu.Unlock()
}

// A muxConn is one multiplexed connection to a peer.
type muxConn struct {
	t     *muxTransport
	host  string
	c     net.Conn
	slots chan struct{} // one per request in flight
	idle  *time.Timer
	used  atomic.Bool // since the last idleCheck

	waiting atomic.Int32 // writers waiting for wmu: the last one flushes
	wmu     sync.Mutex
	bw      *bufio.Writer // under wmu
	buf     []byte        // under wmu
	wdl     time.Time     // under wmu: the write deadline set

	mu      sync.Mutex
	calls   map[uint32]*muxCall // in flight
	nextID  uint32
	err     error // why the connection ended
	closing bool  // close when calls is empty
	// 1xx frames for calls no longer in flight
	strayInterims int64
	ibuf          []byte // the reader's, for interim frames
	done          chan struct{}
	doneOnce      sync.Once
}

// A muxCall is a request in flight; its answer or error arrives on res.
type muxCall struct {
	req      *http.Request
	res      chan muxResult // buffered: the reader never blocks on it
	interims int            // 1xx frames received, under the conn's mu
}

type muxResult struct {
	resp *http.Response
	err  error
}

// errMuxLost is what the requests in flight on a connection that ended
// fail with (wrapping the cause).
var errMuxLost = errors.New("multiplexed connection lost")

func (mc *muxConn) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	select {
	case mc.slots <- struct{}{}:
	default:
		select { // the cap on requests in flight: wait for a slot
		case mc.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-mc.done:
			return nil, mc.err
		}
	}
	defer func() { <-mc.slots }()
	mc.used.Store(true)
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	call := &muxCall{req: req, res: make(chan muxResult, 1)}
	mc.mu.Lock()
	if mc.err != nil {
		mc.mu.Unlock()
		return nil, mc.err
	}
	mc.nextID++
	id := mc.nextID
	mc.calls[id] = call
	mc.mu.Unlock()

	if err := mc.send(req, id, body); err != nil {
		mc.end(id)
		return nil, err
	}
	select {
	case r := <-call.res:
		return r.resp, r.err
	case <-ctx.Done():
		if mc.end(id) {
			go mc.cancel(id) // the owner abandons the load, as over HTTP when the caller goes
		}
		return nil, ctx.Err()
	}
}

// send writes the request frame of call id.
func (mc *muxConn) send(req *http.Request, id uint32, body []byte) error {
	mc.lock()
	defer mc.wmu.Unlock()
	f := muxStart(mc.buf[:0], muxKindRequest, id)
	f = muxAppendString(f, req.Method)
	f = muxAppendString(f, req.URL.RequestURI())
	f, err := muxAppendFields(f, req.Header)
	if err == nil && len(f)-muxFrameHeader-4 > muxMaxHead {
		err = errors.New("the request's head is over the frame limit")
	}
	if err != nil {
		return fmt.Errorf("multiplexed connection: %w", err)
	}
	muxEndHead(f)
	muxSetLen(f, len(body))
	mc.buf = f
	_, err = mc.bw.Write(f)
	if err == nil && len(body) > 0 {
		_, err = mc.bw.Write(body)
	}
	if err == nil && mc.waiting.Load() == 0 {
		err = mc.flush()
	}
	if err != nil {
		mc.fail(err)
		return fmt.Errorf("%w: %w", errMuxLost, err)
	}
	return nil
}

// lock takes the writer. Every write under it, the direct one of a large
// body as well as a flush, is bounded by half the timeout to all of it
// from then (as muxServerConn.lock).
func (mc *muxConn) lock() {
	mc.waiting.Add(1)
	mc.wmu.Lock()
	mc.waiting.Add(-1)
	if now := time.Now(); mc.wdl.Sub(now) < mc.t.timeout/2 {
		mc.wdl = now.Add(mc.t.timeout)
		_ = mc.c.SetWriteDeadline(mc.wdl)
	}
}

// flush flushes the writer; wmu is held.
func (mc *muxConn) flush() error {
	if mc.bw.Buffered() == 0 {
		return nil
	}
	return mc.bw.Flush()
}

// cancel tells the peer that the caller of id has gone.
func (mc *muxConn) cancel(id uint32) {
	mc.lock()
	defer mc.wmu.Unlock()
	f := muxStart(mc.buf[:0], muxKindCancel, id)[:muxFrameHeader]
	mc.buf = f
	_, err := mc.bw.Write(f)
	if err == nil {
		err = mc.flush()
	}
	if err != nil {
		mc.fail(err)
	}
}

// end removes call id; it reports whether it was still waiting.
func (mc *muxConn) end(id uint32) bool {
	mc.mu.Lock()
	_, ok := mc.calls[id]
	delete(mc.calls, id)
	closeNow := mc.closing && len(mc.calls) == 0
	mc.mu.Unlock()
	if closeNow {
		mc.fail(errMuxLost)
	}
	return ok
}

// read reads the answers and hands each to its call, until the connection
// fails; then it fails every call in flight.
func (mc *muxConn) read(br *bufio.Reader) {
	var err error
	for err == nil {
		err = mc.readFrame(br)
	}
	mc.fail(err)
}

// readFrame reads one frame and delivers it.
func (mc *muxConn) readFrame(br *bufio.Reader) error {
	n, kind, id, err := muxReadHeader(br)
	switch {
	case err != nil:
		return err
	case kind != muxKindAnswer && kind != muxKindInterim:
		return fmt.Errorf("%w: kind %d from the server", errMuxFrame, kind)
	case n > mc.t.maxFrame || (kind == muxKindInterim && n > 4+muxMaxHead):
		return fmt.Errorf("%w: a frame of %d bytes", errMuxFrame, n)
	}
	if int64(br.Buffered()) < n {
		// A frame that has begun must arrive within the timeout, which
		// bounds every request: a peer that stops in the middle of one
		// holds every answer behind it.
		_ = mc.c.SetReadDeadline(time.Now().Add(mc.t.timeout))
		defer func() { _ = mc.c.SetReadDeadline(time.Time{}) }()
	}
	if kind == muxKindInterim {
		return mc.readInterim(br, n, id)
	}
	payload, err := muxReadPayload(br, n)
	if err != nil {
		return err
	}
	head, body, err := muxSplit(payload)
	if err != nil {
		return err
	}
	status := head.uint16()
	h := head.fields()
	if head.err != nil {
		return head.err
	}
	if status < 200 || status > 999 {
		return fmt.Errorf("%w: status %d", errMuxFrame, status)
	}
	mc.mu.Lock()
	call := mc.calls[id]
	delete(mc.calls, id)
	closeNow := mc.closing && len(mc.calls) == 0
	mc.mu.Unlock()
	if call != nil { // else its caller has gone
		call.res <- muxResult{resp: &http.Response{
			Status: fmt.Sprint(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, ContentLength: int64(len(body)), Body: io.NopCloser(bytes.NewReader(body)), Request: call.req,
		}}
	}
	if closeNow {
		return errMuxLost
	}
	return nil
}

// muxMaxInterims is how many 1xx a request may get, as net/http's
// client allows: a peer that sends more floods the connection, which
// ends.
const muxMaxInterims = 5

// readInterim reads an interim frame of n bytes (at most a head) into a
// buffer the reader reuses, and passes the first one of a call on as its
// 1xx (its fields are not read: no caller uses them).
func (mc *muxConn) readInterim(br *bufio.Reader, n int64, id uint32) error {
	if int64(cap(mc.ibuf)) < n {
		mc.ibuf = make([]byte, n)
	}
	p := mc.ibuf[:n]
	if _, err := io.ReadFull(br, p); err != nil {
		return err
	}
	if n < 6 || int64(binary.BigEndian.Uint32(p)) != n-4 {
		return fmt.Errorf("%w: an interim answer with a body", errMuxFrame)
	}
	status := int(binary.BigEndian.Uint16(p[4:]))
	if status < 100 || status > 199 || status == http.StatusSwitchingProtocols {
		return fmt.Errorf("%w: interim status %d", errMuxFrame, status)
	}
	mc.mu.Lock()
	call := mc.calls[id]
	if call != nil {
		call.interims++
	} else {
		mc.strayInterims++ // for a caller that has gone
	}
	interims, strays, sent := 0, mc.strayInterims, mc.nextID
	if call != nil {
		interims = call.interims
	}
	mc.mu.Unlock()
	if interims > muxMaxInterims || strays > muxMaxInterims*int64(sent)+muxMaxInterims {
		return fmt.Errorf("%w: too many 1xx answers", errMuxFrame)
	}
	if interims == 1 { // one sign of life is enough
		if tr := httptrace.ContextClientTrace(call.req.Context()); tr != nil && tr.Got1xxResponse != nil {
			_ = tr.Got1xxResponse(status, nil)
		}
	}
	return nil
}

// fail ends the connection with err (once): every call in flight gets the
// error, and new requests open a new connection.
func (mc *muxConn) fail(err error) {
	mc.doneOnce.Do(func() {
		mc.t.forget(mc)
		mc.idle.Stop()
		_ = mc.c.Close()
		if !errors.Is(err, errMuxLost) {
			err = fmt.Errorf("%w: %w", errMuxLost, err)
		}
		mc.mu.Lock()
		mc.err = err
		calls := mc.calls
		mc.calls = nil
		mc.mu.Unlock()
		for _, call := range calls {
			call.res <- muxResult{err: err}
		}
		close(mc.done)
	})
}

// closeWhenIdle closes the connection once no request is in flight.
func (mc *muxConn) closeWhenIdle() {
	mc.mu.Lock()
	mc.closing = true
	idle := len(mc.calls) == 0
	mc.mu.Unlock()
	if idle {
		mc.fail(errMuxLost)
	}
}

// idleCheck closes the connection if no request used it since the last
// check (muxIdleTimeout ago) and none is in flight.
func (mc *muxConn) idleCheck() {
	mc.mu.Lock()
	busy := len(mc.calls) > 0
	mc.mu.Unlock()
	if !mc.used.Swap(false) && !busy {
		mc.fail(errMuxLost)
		return
	}
	mc.idle.Reset(muxIdleTimeout)
}

// multiplexed returns the transport of a Pool with Multiplex, over cc's
// (mux_nosocket.go has the one for GOOS=js and GOOS=wasip1, which fails).
func multiplexed(cc clientConfig) (http.RoundTripper, error) {
	return newMuxTransport(cc.rt, cc.base, cc.proto.MaxValueBytes(), cc.timeout), nil
}
