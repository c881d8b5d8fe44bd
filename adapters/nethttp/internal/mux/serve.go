//go:build !js && !wasip1

package mux

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// A multiplexed connection as the serving node has it: it reads the
// request frames, serves each with the Pool's handler, and writes the
// answers (response.go).

// A muxServerConn is one multiplexed connection served.
type muxServerConn struct {
	s            *Server
	remote, host string
	// base is the parent of every request's context: it has no Done, so
	// a request's own context costs no registration with a parent; the
	// connection's end cancels each (cancelAll).
	base     context.Context
	slots    chan struct{} // one per request in flight
	stopping atomic.Bool
	// goaway: the peer understands the go-away frame (it said so in its
	// upgrade); stop then sends one, and the connection reads on until
	// the requests taken are answered.
	goaway bool
	// interims: the peer takes a 102 repeated while a load runs (it said
	// so in its upgrade); else it is sent the first one only.
	interims bool
	away     sync.WaitGroup // the go-away being sent
	// lc is the connection as a Server's listener has it (nil if not
	// served by a Server): while no request is in flight it is idle, and
	// the connection cap may close it to make room (ServerOptions.MaxConns).
	lc TrackedConn

	frameWriter
	failed bool // under wmu

	hbuf []byte // the reader's, for heads

	mu       sync.Mutex
	cancels  map[uint32]context.CancelFunc // of the requests in flight
	frameEnd time.Time                     // the read deadline of the frame begun, zero between frames
	lastID   uint32                        // the highest request id taken
	ended    bool                          // the reader has ended
	wentAway bool                          // a go-away is sent
	handlers sync.WaitGroup
	work     chan func()
}

// stop makes the connection take no more requests; it closes once those
// in flight are answered. A peer that understands it is told so (a
// go-away naming the last request taken), and the connection reads on
// meanwhile (cancels, and requests it drops, which the peer sends
// elsewhere); to an older peer it simply stops reading. stop never
// blocks: the go-away is written by a goroutine of its own.
func (sc *muxServerConn) stop() {
	sc.mu.Lock() // no request's end sets the idle deadline after this one
	defer sc.mu.Unlock()
	first := !sc.stopping.Swap(true)
	if !sc.goaway || len(sc.cancels) == 0 {
		_ = sc.c.SetReadDeadline(time.Now()) // nothing to wait for: the reader ends
	}
	if first && sc.goaway && !sc.ended {
		sc.wentAway = true
		last := sc.lastID
		sc.away.Go(func() { sc.sendGoAway(last) })
	}
}

// sendGoAway writes the go-away frame naming last.
func (sc *muxServerConn) sendGoAway(last uint32) {
	f := StartFrame(make([]byte, 0, FrameHeader+4), KindGoAway, 0)[:FrameHeader]
	f = binary.BigEndian.AppendUint32(f, last)
	binary.BigEndian.PutUint32(f, 4)
	sc.lock()
	sc.write(f)
	sc.unlock()
}

// serve reads frames and serves them until the connection ends or stops.
// br is the reader the upgrade request was read with (net/http's, small):
// the connection's own read buffer is allocated once the first frame
// begins, and reads through it.
func (sc *muxServerConn) serve(br *bufio.Reader) {
	sc.work = make(chan func())
	sc.mu.Lock()
	sc.setReadDeadline()
	sc.mu.Unlock()
	var err error
	wide := false
	for sc.readOn(err) {
		if !wide {
			if _, err = br.Peek(1); err != nil {
				continue // as a frame that did not begin
			}
			br, wide = bufio.NewReaderSize(br, muxBufSize), true
		}
		err = sc.readFrame(br)
	}
	close(sc.work)
	sc.mu.Lock()
	sc.ended = true // no go-away is sent from now on (stop)
	wentAway := sc.wentAway
	sc.mu.Unlock()
	stopped := sc.stopping.Load()
	if !stopped {
		sc.cancelAll() // the caller has gone: its loads are abandoned, as over HTTP
	}
	sc.handlers.Wait()
	sc.away.Wait()
	sc.lock()
	linger := !sc.failed && wentAway
	if !sc.failed {
		_ = sc.flush()
	}
	sc.wmu.Unlock()
	sc.cancelAll()
	if linger {
		sc.linger(br)
	}
	_ = sc.c.Close()
}

// readOn reports whether the reader goes on after a frame read with err:
// not once the connection stopped (for a peer told to go away, once the
// requests it took are answered), nor after an error, except a timeout
// while requests are in flight (the idle deadline, set as the last
// request ended, while a new one began; or stop's, which ends the reader
// of a peer told to go away only when it has nothing in flight).
func (sc *muxServerConn) readOn(err error) bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	busy := len(sc.cancels) > 0
	if sc.stopping.Load() && (!sc.goaway || !busy) {
		return false
	}
	if err == nil {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && busy {
		_ = sc.c.SetReadDeadline(time.Time{})
		return true
	}
	return false
}

// linger ends a connection that went away and has sent its last answer:
// it sends its end (a half close) and reads, discarding, until the peer
// closes its side, for at most muxLinger. Closing at once with the
// peer's late frames unread would reset the connection, which can lose
// the answers the peer has not read yet.
func (sc *muxServerConn) linger(br *bufio.Reader) {
	cw, ok := sc.c.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	_ = sc.c.SetReadDeadline(time.Now().Add(muxLinger))
	_, _ = io.Copy(io.Discard, br)
}

// setReadDeadline sets the read deadline the connection's state calls
// for; sc.mu is held. A stopped connection's reader ends at once, unless
// it waits for the requests a peer told to go away still has in flight;
// a frame that has begun has the read timeout from its first byte to its
// end (frameEnd), as an HTTP request has; between frames, a connection
// with no request in flight has the idle timeout, and one with requests
// in flight no deadline.
func (sc *muxServerConn) setReadDeadline() {
	var d time.Time
	switch {
	case sc.stopping.Load() && (!sc.goaway || len(sc.cancels) == 0):
		d = time.Now()
	case !sc.frameEnd.IsZero():
		d = sc.frameEnd
	case len(sc.cancels) == 0:
		d = time.Now().Add(sc.s.idleTimeout)
	}
	_ = sc.c.SetReadDeadline(d)
}

// frameBegins gives the frame being read the read timeout from now;
// frameEnds takes it back once the frame is read.
func (sc *muxServerConn) frameBegins() {
	sc.mu.Lock()
	sc.frameEnd = time.Now().Add(sc.s.readTimeout)
	sc.setReadDeadline()
	sc.mu.Unlock()
}

func (sc *muxServerConn) frameEnds() {
	sc.mu.Lock()
	sc.frameEnd = time.Time{}
	sc.setReadDeadline()
	if len(sc.cancels) == 0 {
		sc.markIdle()
	}
	sc.mu.Unlock()
}

// markIdle records, for the Server's connection cap, that no request is
// in flight: the cap may close the connection to make room for another.
// sc.mu is held.
func (sc *muxServerConn) markIdle() {
	if sc.lc != nil && !sc.stopping.Load() {
		sc.lc.SetIdle(true)
	}
}

// cancelAll cancels the context of every request in flight.
func (sc *muxServerConn) cancelAll() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, cancel := range sc.cancels {
		cancel()
	}
}

// readFrame reads one frame and starts serving it.
func (sc *muxServerConn) readFrame(br *bufio.Reader) error {
	// Waiting for a frame to begin is bounded by the idle timeout (by
	// none while requests are in flight); once its first byte is in, the
	// rest of the frame, its header included, must arrive within the
	// read timeout: a caller that stops inside a frame holds the
	// connection, and every request on it.
	if _, err := br.Peek(1); err != nil {
		return err
	}
	armed := false
	arm := func() {
		if !armed {
			armed = true
			sc.frameBegins()
		}
	}
	defer func() {
		if armed {
			sc.frameEnds()
		}
	}()
	if br.Buffered() < FrameHeader {
		arm()
	}
	n, kind, id, err := ReadHeader(br)
	switch {
	case err != nil:
		// Not a timeout to retry (readOn): the frame has begun.
		return fmt.Errorf("reading a frame: %v", err)
	case kind == KindCancel:
		if n != 0 {
			return ErrFrame
		}
		sc.mu.Lock()
		cancel := sc.cancels[id]
		sc.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return nil
	case kind != KindRequest || n > sc.s.maxFrame:
		return ErrFrame
	}
	if int64(br.Buffered()) < n {
		arm()
	}
	head, bodyLen, buf, err := muxReadHead(br, n, sc.hbuf)
	sc.hbuf = buf
	if err != nil {
		return muxFrameErr(err)
	}
	method, target := head.Text(), head.Text()
	h := head.Fields()
	if head.Err != nil {
		return head.Err
	}
	u, err := url.ParseRequestURI(target)
	if err != nil || method == "" {
		return ErrFrame
	}
	req := &http.Request{Method: method, URL: u, RequestURI: target, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: http.NoBody, Host: sc.host, RemoteAddr: sc.remote}
	var body *muxFrameBody
	if bodyLen > 0 {
		body = &muxFrameBody{n: bodyLen, asked: make(chan struct{}), ready: make(chan struct{}), handled: make(chan struct{})}
		req.Body, req.ContentLength = body, bodyLen
	}
	select {
	case sc.slots <- struct{}{}:
	default: // the cap on requests in flight: read no more until one ends
		sc.slots <- struct{}{}
		if armed {
			sc.frameBegins() // the wait was this node's: the rest of the frame (its body) has the read timeout from now
		}
	}
	ctx, cancel := context.WithCancel(sc.base)
	sc.mu.Lock()
	if sc.goaway && sc.stopping.Load() { // after the go-away: not taken, the peer sends it elsewhere
		sc.mu.Unlock()
		cancel()
		<-sc.slots
		return muxSkip(br, bodyLen)
	}
	if _, dup := sc.cancels[id]; dup {
		sc.mu.Unlock()
		cancel()
		<-sc.slots
		return fmt.Errorf("%w: request id %d in flight twice", ErrFrame, id)
	}
	sc.cancels[id] = cancel
	sc.lastID = max(sc.lastID, id)
	if len(sc.cancels) == 1 {
		sc.setReadDeadline() // busy: no idle timeout
		if sc.lc != nil {
			sc.lc.SetIdle(false)
		}
	}
	sc.mu.Unlock()
	job := func() { sc.handle(req.WithContext(ctx), id) }
	if body != nil {
		job = func() {
			sc.handle(req.WithContext(ctx), id)
			close(body.handled)
		}
	}
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
	if body != nil {
		return body.read(br)
	}
	return nil
}

// muxFrameErr is the error of a read that failed inside a frame: not a
// timeout to retry (readOn), since part of the frame is read.
func muxFrameErr(err error) error {
	if errors.Is(err, ErrFrame) {
		return err
	}
	return fmt.Errorf("reading a frame: %v", err)
}

// muxSkip reads the next n bytes of a frame, a body no one takes, and
// drops them, through br's own buffer.
func muxSkip(br *bufio.Reader, n int64) error {
	for n > 0 {
		m, err := br.Discard(int(min(n, 1<<30)))
		if err != nil {
			return muxFrameErr(err)
		}
		n -= int64(m)
	}
	return nil
}

// A muxFrameBody is the body of a request frame, read from the connection
// only if the handler asks for it (its first Read or TakeBody), once it
// has checked the request's head: the body of a request refused on its
// head alone (unsigned, over the size limit, a body where none is taken)
// is skipped, never held in a buffer. The reader waits, after starting
// the handler, until it asks for the body or has returned without it
// (read); the handler waits for the body while the reader reads it.
type muxFrameBody struct {
	muxBody       // once read
	n       int64 // its length
	ask     sync.Once
	asked   chan struct{} // closed by the handler's first Read or TakeBody
	handled chan struct{} // closed once the handler has returned
	ready   chan struct{} // closed by the reader once muxBody, or err, is set
	err     error
}

// read is the reader's part: it reads the body into a buffer of its own,
// which becomes the value (a PUT's, see muxBody), if the handler asks for
// it, or skips it once the handler has returned without it.
func (b *muxFrameBody) read(br *bufio.Reader) error {
	select {
	case <-b.asked:
		var body []byte
		body, b.err = muxReadPayloadFrom(br, b.n, muxServerPreAlloc)
		if b.err == nil {
			b.b = body
		}
		close(b.ready)
		if b.err != nil {
			return muxFrameErr(b.err)
		}
		return nil
	case <-b.handled:
		return muxSkip(br, b.n)
	}
}

// load asks the reader for the body and waits for it.
func (b *muxFrameBody) load() error {
	b.ask.Do(func() { close(b.asked) })
	<-b.ready
	return b.err
}

func (b *muxFrameBody) Read(p []byte) (int, error) {
	if err := b.load(); err != nil {
		return 0, fmt.Errorf("reading a multiplexed request's body: %w", err)
	}
	return b.muxBody.Read(p)
}

// TakeBody returns the body, read whole, and leaves b empty (see
// protocol.WholeBody). A body that could not be read whole has ended the
// connection, and with it the request: TakeBody, which has no error to
// return and must not hand over a body cut short as a value, aborts the
// handler then (it panics with http.ErrAbortHandler, as a handler does to
// abort its answer; handle recovers it).
func (b *muxFrameBody) TakeBody() []byte {
	if b.load() != nil {
		panic(http.ErrAbortHandler)
	}
	return b.muxBody.TakeBody()
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
		if len(sc.cancels) == 0 {
			// Idle: the idle timeout; or, for a peer told to go away, the
			// last request taken is answered: the reader ends.
			sc.setReadDeadline()
			if sc.frameEnd.IsZero() { // else once the frame being read is in (frameEnds): its body may be this request's
				sc.markIdle()
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

// unlock flushes the writer, if no other writer waits, and releases it.
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
	if _, err := sc.writer().Write(p); err != nil {
		sc.failed = true
		_ = sc.c.Close()
	}
}
