//go:build !js && !wasip1

package nethttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// A muxServer takes the upgrades to the multiplexed carriage (see
// mux_frame.go) over, for a Pool: every node accepts them, whatever its
// own PoolOptions.Multiplex. Each request frame is served by the Pool's
// handler, as an HTTP request would be, so every frame is checked, signed
// and limited by the same code.
type muxServer struct {
	h        http.Handler // the Pool's handler
	base     string
	maxFrame int64
	log      *slog.Logger

	mu    sync.Mutex
	conns map[*muxServerConn]struct{}
}

func newMuxServer(h http.Handler, base string, maxValue int64, log *slog.Logger) *muxServer {
	// A request carries a value (a PUT) or a batch's keys, whichever limit
	// is higher.
	maxBody := max(maxValue, protocol.MaxBatchBytes)
	return &muxServer{h: h, base: base, maxFrame: muxMaxFrame(maxBody), log: log, conns: map[*muxServerConn]struct{}{}}
}

// isUpgrade reports whether r asks for the multiplexed carriage.
func (s *muxServer) isUpgrade(r *http.Request) bool {
	up := r.Header["Upgrade"] // as net/http stores it: no canonicalisation on every request
	return len(up) == 1 && r.Method == http.MethodGet && strings.EqualFold(up[0], muxProtocol) &&
		r.URL.EscapedPath() == s.base+muxPath && headerHasToken(r.Header, "Connection", "upgrade")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// serve takes the connection of r, an upgrade, over and serves its frames
// until it closes. It returns false if the connection cannot be taken
// over (HTTP/2): then r is for the handler to answer.
func (s *muxServer) serve(w http.ResponseWriter, r *http.Request) bool {
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	_ = c.SetDeadline(time.Time{}) // the Server's deadlines were for one request
	sc := &muxServerConn{s: s, c: c, remote: r.RemoteAddr, host: r.Host, base: context.WithoutCancel(r.Context()),
		bw: bufio.NewWriterSize(c, 64<<10), slots: make(chan struct{}, muxMaxInFlight), cancels: map[uint32]context.CancelFunc{}}
	// Known before the 101 is sent, so that a Pool.Close or a shutdown
	// after the peer has it stops the connection.
	s.mu.Lock()
	s.conns[sc] = struct{}{}
	s.mu.Unlock()
	var untrack func()
	if lc, ok := c.(*serverConn); ok { // a Server's: its shutdown stops the connection
		untrack = lc.l.trackMux(lc, sc.stop)
		sc.lc = lc
		lc.l.muxIdle(lc, true) // no request yet
	}
	_ = c.SetWriteDeadline(time.Now().Add(serverWriteTimeout))
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + muxProtocol + "\r\n\r\n")
	if brw.Flush() != nil {
		_ = c.Close() // serve ends at once
	}
	sc.serve(bufio.NewReaderSize(brw.Reader, 64<<10))
	if untrack != nil {
		untrack()
	}
	s.mu.Lock()
	delete(s.conns, sc)
	s.mu.Unlock()
	return true
}

// stopAll stops every connection: each ends once its requests in flight
// are answered.
func (s *muxServer) stopAll() {
	s.mu.Lock()
	conns := make([]*muxServerConn, 0, len(s.conns))
	for sc := range s.conns {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	for _, sc := range conns {
		sc.stop()
	}
}

// A muxServerConn is one multiplexed connection served.
type muxServerConn struct {
	s            *muxServer
	c            net.Conn
	remote, host string
	// base is the parent of every request's context: it has no Done, so
	// a request's own context costs no registration with a parent; the
	// connection's end cancels each (cancelAll).
	base     context.Context
	slots    chan struct{} // one per request in flight
	stopping atomic.Bool
	// lc is the connection as a Server's listener has it (nil if not
	// served by a Server): while no request is in flight it is idle, and
	// the connection cap may close it to make room (ServerOptions.MaxConns).
	lc *serverConn

	waiting atomic.Int32
	wmu     sync.Mutex
	bw      *bufio.Writer // under wmu
	failed  bool          // under wmu
	wdl     time.Time     // under wmu: the write deadline set

	mu       sync.Mutex
	cancels  map[uint32]context.CancelFunc // of the requests in flight
	handlers sync.WaitGroup
	work     chan func()
}

// stop makes the connection read no more requests; it closes once those
// in flight are answered.
func (sc *muxServerConn) stop() {
	sc.mu.Lock() // no request's end sets the idle deadline after this one
	defer sc.mu.Unlock()
	sc.stopping.Store(true)
	_ = sc.c.SetReadDeadline(time.Now())
}

// serve reads frames and serves them until the connection ends or stops.
func (sc *muxServerConn) serve(br *bufio.Reader) {
	sc.work = make(chan func())
	_ = sc.c.SetReadDeadline(time.Now().Add(serverIdleTimeout))
	var err error
	for err == nil && !sc.stopping.Load() {
		err = sc.readFrame(br)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && !sc.stopping.Load() && sc.inFlight() > 0 {
			err = nil // the idle deadline, set as the last request ended, while a new one began
			_ = sc.c.SetReadDeadline(time.Time{})
		}
	}
	close(sc.work)
	if !sc.stopping.Load() {
		sc.cancelAll() // the caller has gone: its loads are abandoned, as over HTTP
	}
	sc.handlers.Wait()
	sc.lock()
	if !sc.failed {
		_ = sc.flush()
	}
	sc.wmu.Unlock()
	sc.cancelAll()
	_ = sc.c.Close()
}

// cancelAll cancels the context of every request in flight.
func (sc *muxServerConn) cancelAll() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, cancel := range sc.cancels {
		cancel()
	}
}

func (sc *muxServerConn) inFlight() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.cancels)
}

// readFrame reads one frame and starts serving it.
func (sc *muxServerConn) readFrame(br *bufio.Reader) error {
	n, kind, id, err := muxReadHeader(br)
	switch {
	case err != nil:
		return err
	case kind == muxKindCancel:
		if n != 0 {
			return errMuxFrame
		}
		sc.mu.Lock()
		cancel := sc.cancels[id]
		sc.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return nil
	case kind != muxKindRequest || n > sc.s.maxFrame:
		return errMuxFrame
	}
	if int64(br.Buffered()) < n {
		_ = sc.c.SetReadDeadline(time.Now().Add(serverReadTimeout)) // as for an HTTP request
	}
	payload, err := muxReadPayload(br, n)
	if err != nil {
		// Not a timeout to retry: part of the frame is read.
		return fmt.Errorf("reading a frame: %v", err)
	}
	head, body, err := muxSplit(payload)
	if err != nil {
		return err
	}
	method, target := head.string(), head.string()
	h := head.fields()
	if head.err != nil {
		return head.err
	}
	u, err := url.ParseRequestURI(target)
	if err != nil || method == "" {
		return errMuxFrame
	}
	req := &http.Request{Method: method, URL: u, RequestURI: target, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: http.NoBody, Host: sc.host, RemoteAddr: sc.remote}
	if len(body) > 0 {
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	sc.slots <- struct{}{} // the cap on requests in flight: read no more until one ends
	ctx, cancel := context.WithCancel(sc.base)
	sc.mu.Lock()
	if _, dup := sc.cancels[id]; dup {
		sc.mu.Unlock()
		cancel()
		<-sc.slots
		return fmt.Errorf("%w: request id %d in flight twice", errMuxFrame, id)
	}
	sc.cancels[id] = cancel
	if len(sc.cancels) == 1 {
		_ = sc.c.SetReadDeadline(time.Time{}) // busy: no idle timeout
		if sc.lc != nil {
			sc.lc.l.muxIdle(sc.lc, false)
		}
	}
	sc.mu.Unlock()
	job := func() { sc.handle(req.WithContext(ctx), id) }
	select { // a goroutine that served a request serves the next: a new one grows its stack again
	case sc.work <- job:
	default:
		sc.handlers.Go(func() {
			job()
			for j := range sc.work {
				j()
			}
		})
	}
	return nil
}

// handle serves one request frame and sends its answer.
func (sc *muxServerConn) handle(req *http.Request, id uint32) {
	w := &muxResponseWriter{sc: sc, id: id, header: make(http.Header, 8)}
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				sc.s.log.Error("geecache: panic serving a peer request", slog.Any("panic", p), slog.String("path", req.URL.Path))
			}
			sc.abort() // as net/http does: the connection closes
		} else {
			w.finish()
		}
		sc.mu.Lock()
		if cancel := sc.cancels[id]; cancel != nil {
			cancel()
		}
		delete(sc.cancels, id)
		if len(sc.cancels) == 0 && !sc.stopping.Load() {
			_ = sc.c.SetReadDeadline(time.Now().Add(serverIdleTimeout))
			if sc.lc != nil {
				sc.lc.l.muxIdle(sc.lc, true)
			}
		}
		sc.mu.Unlock()
		<-sc.slots
	}()
	sc.s.h.ServeHTTP(w, req)
}

// abort closes the connection: its reader fails and every request ends.
func (sc *muxServerConn) abort() {
	sc.wmu.Lock()
	sc.failed = true
	sc.wmu.Unlock()
	_ = sc.c.Close()
}

// lock takes the writer; unlock flushes it if no other writer waits.
// Every write, the direct one of a large body as well as a flush, is
// bounded by half the write timeout to all of it from the moment the
// writer is taken (the deadline is moved only when less than half is
// left: a deadline set per frame would cost a tenth of a request).
func (sc *muxServerConn) lock() {
	sc.waiting.Add(1)
	sc.wmu.Lock()
	sc.waiting.Add(-1)
	if now := time.Now(); sc.wdl.Sub(now) < serverWriteTimeout/2 {
		sc.wdl = now.Add(serverWriteTimeout)
		_ = sc.c.SetWriteDeadline(sc.wdl)
	}
}

func (sc *muxServerConn) unlock() {
	if !sc.failed && sc.waiting.Load() == 0 && sc.flush() != nil {
		sc.failed = true
		_ = sc.c.Close()
	}
	sc.wmu.Unlock()
}

// write writes p under the writer lock; a failure closes the connection.
func (sc *muxServerConn) write(p []byte) {
	if sc.failed {
		return
	}
	if _, err := sc.bw.Write(p); err != nil {
		sc.failed = true
		_ = sc.c.Close()
	}
}

// flush flushes the writer; wmu is held, with its deadline set.
func (sc *muxServerConn) flush() error {
	if sc.bw.Buffered() == 0 {
		return nil
	}
	return sc.bw.Flush()
}

// A muxResponseWriter sends the handler's answer to one request frame as
// an answer frame; a 1xx goes at once, as an interim frame. A body written
// in one Write of the announced Content-Length (as the handler sends every
// answer) goes straight to the connection, the cached value uncopied.
type muxResponseWriter struct {
	sc     *muxServerConn
	id     uint32
	header http.Header
	status int
	sent   bool
	body   []byte
}

func (w *muxResponseWriter) Header() http.Header { return w.header }

func (w *muxResponseWriter) WriteHeader(code int) {
	if w.status != 0 || w.sent {
		return
	}
	if code >= 100 && code < 200 {
		if code != http.StatusSwitchingProtocols {
			f := muxStart(nil, muxKindInterim, w.id)
			f = append(f, byte(code>>8), byte(code), 0, 0) // status, no fields
			muxEndHead(f)
			muxSetLen(f, 0)
			w.sc.lock()
			w.sc.write(f)
			w.sc.unlock()
		}
		return
	}
	w.status = code
}

// head returns the answer frame's header and head, for a body of n bytes;
// ok is false if the handler's fields do not fit a frame, and then the
// frame is a 500 without a body.
func (w *muxResponseWriter) head(n int) (f []byte, ok bool) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	delete(w.header, "Content-Length") // the frame has it
	delete(w.header, "Connection")     // this one stays open
	f = muxStart(make([]byte, 0, 256), muxKindAnswer, w.id)
	f = append(f, byte(w.status>>8), byte(w.status))
	f, err := muxAppendFields(f, w.header)
	ok = err == nil && len(f)-muxFrameHeader-4 <= muxMaxHead
	if !ok { // no handler of this package writes such fields
		f = muxStart(f[:0], muxKindAnswer, w.id)
		f = append(f, byte(http.StatusInternalServerError>>8), byte(http.StatusInternalServerError&0xff), 0, 0)
		n = 0
	}
	muxEndHead(f)
	muxSetLen(f, n)
	return f, ok
}

func (w *muxResponseWriter) Write(p []byte) (int, error) {
	if w.sent {
		return 0, errors.New("geecache: body longer than announced")
	}
	if w.body == nil && strconv.Itoa(len(p)) == w.header.Get("Content-Length") {
		f, ok := w.head(len(p))
		w.sc.lock()
		w.sc.write(f)
		if ok {
			w.sc.write(p)
		}
		w.sc.unlock()
		w.sent = true
		return len(p), nil
	}
	if int64(len(w.body)+len(p)) > w.sc.s.maxFrame {
		return 0, errors.New("geecache: answer over the frame limit")
	}
	w.body = append(w.body, p...)
	return len(p), nil
}

// finish sends the answer if Write has not.
func (w *muxResponseWriter) finish() {
	if w.sent {
		return
	}
	w.sent = true
	f, ok := w.head(len(w.body))
	w.sc.lock()
	w.sc.write(f)
	if ok {
		w.sc.write(w.body)
	}
	w.sc.unlock()
}

// A muxTrack is the part of a limitListener that knows the multiplexed
// connections taken over from it, guarded by its mu.
type muxTrack struct {
	mux map[*serverConn]func() // their stop
}

// trackMux records c, a multiplexed connection taken over from l, so that
// closing l (the Server's Shutdown or Close) stops it; untrack forgets it.
func (l *limitListener) trackMux(c *serverConn, stop func()) (untrack func()) {
	l.mu.Lock()
	if l.mux == nil {
		l.mux = map[*serverConn]func(){}
	}
	l.mux[c] = stop
	l.mu.Unlock()
	select {
	case <-l.done:
		stop()
	default:
	}
	return func() {
		l.mu.Lock()
		delete(l.mux, c)
		l.mu.Unlock()
	}
}

// muxIdle records that c, a multiplexed connection, is idle (no request in
// flight) or busy, as trackConnState does for HTTP: an idle one is closed
// at once if a new connection waits for its slot, and may be closed later
// to make room for one.
func (l *limitListener) muxIdle(c *serverConn, idle bool) {
	l.mu.Lock()
	if _, open := l.conns[c]; !open {
		l.mu.Unlock()
		return
	}
	since, closeIt := uint64(0), false
	if idle {
		l.seq++
		since, closeIt = l.seq, l.waiting
	}
	l.conns[c] = since
	l.mu.Unlock()
	if closeIt {
		_ = c.Close()
	}
}

// stopMux stops every multiplexed connection taken over from l.
func (l *limitListener) stopMux() {
	l.mu.Lock()
	stops := make([]func(), 0, len(l.mux))
	for _, stop := range l.mux {
		stops = append(stops, stop)
	}
	l.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
}
