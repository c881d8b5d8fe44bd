//go:build !js && !wasip1

package mux

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// One multiplexed connection as the asking node has it: its requests in
// flight, their frames out, and its end (read.go reads the answers).

// A muxConn is one multiplexed connection to a peer.
type muxConn struct {
	t     *muxTransport
	host  string
	slots chan struct{} // one per request in flight
	idle  *time.Timer
	born  time.Time
	// lastUse is when a request last began or ended on the connection,
	// as time since born (a monotonic reading): the idle timeout counts
	// from it.
	lastUse atomic.Int64

	frameWriter
	buf []byte // under wmu

	mu      sync.Mutex
	calls   map[uint32]*muxCall // in flight
	nextID  uint32
	err     error // why the connection ended
	closing bool  // take no new request; close when calls is empty
	away    bool  // the peer went away (a go-away frame came)
	// 1xx frames for calls no longer in flight
	strayInterims int64
	strayStart    time.Time // when the first of them came
	ibuf          []byte    // the reader's, for interim frames
	done          chan struct{}
	doneOnce      sync.Once
}

// A muxCall is a request in flight; its answer or error arrives on res.
type muxCall struct {
	req      *http.Request
	res      chan muxResult // buffered: the reader never blocks on it
	interims int            // 1xx frames received, under the conn's mu
	start    time.Time      // when it was sent: the 1xx it may get grow with its age
}

type muxResult struct {
	resp *http.Response
	err  error
}

// ErrLost is what the requests in flight on a connection that ended
// fail with (wrapping the cause).
var ErrLost = errors.New("multiplexed connection lost")

// errMuxRetry is what a request the peer did not take fails with: the
// peer went away before it, or the connection ended or began to close
// before it was sent. The transport sends it again (RoundTrip).
var errMuxRetry = errors.New("multiplexed connection: request not taken")

// roundTrip sends req, whose body is body, and waits for its answer.
func (mc *muxConn) roundTrip(req *http.Request, body []byte) (*http.Response, error) {
	ctx := req.Context()
	select {
	case mc.slots <- struct{}{}:
	default:
		select { // the cap on requests in flight: wait for a slot
		case mc.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-mc.done:
			return nil, errMuxRetry
		}
	}
	mc.touch()
	defer func() {
		mc.touch() // before the slot is free: idleCheck sees the end
		<-mc.slots
	}()
	call := &muxCall{req: req, res: make(chan muxResult, 1), start: time.Now()}
	id, err := mc.send(req, call, body)
	if err != nil {
		if id != 0 {
			mc.end(id)
		}
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

// send gives call the next request id and writes its request frame; the
// id is taken under the writer, so that ids go out in increasing order
// (a go-away names the last one taken). It fails with errMuxRetry, and id
// 0, if the connection takes no new request.
func (mc *muxConn) send(req *http.Request, call *muxCall, body []byte) (id uint32, err error) {
	mc.lock()
	defer mc.wmu.Unlock()
	f := StartFrame(mc.buf[:0], KindRequest, 0)
	f = AppendString(f, req.Method)
	f = AppendString(f, req.URL.RequestURI())
	f, err = AppendFields(f, req.Header)
	if err == nil && len(f)-FrameHeader-4 > muxMaxHead {
		err = errors.New("the request's head is over the frame limit")
	}
	if err != nil {
		mc.flushLeft()
		return 0, fmt.Errorf("multiplexed connection: %w", err)
	}
	EndHead(f)
	SetLen(f, len(body))
	mc.buf = f
	mc.mu.Lock()
	if mc.err != nil || mc.closing {
		mc.mu.Unlock()
		mc.flushLeft()
		return 0, errMuxRetry
	}
	mc.nextID++
	id = mc.nextID
	mc.calls[id] = call
	retire := id == muxMaxID
	mc.closing = mc.closing || retire
	mc.mu.Unlock()
	if retire {
		mc.t.forget(mc)
	}
	binary.BigEndian.PutUint32(f[5:], id)
	bw := mc.writer()
	_, err = bw.Write(f)
	if err == nil && len(body) > 0 {
		_, err = bw.Write(body)
	}
	if err == nil && mc.waiting.Load() == 0 {
		err = mc.flush()
	}
	if err != nil {
		mc.fail(err)
		// fail has given call its result, unless a go-away handed it back
		// before (errMuxRetry). A write that found the connection closed
		// by this side (it ended or went away meanwhile) sent no whole
		// frame: the peer did not take the request either.
		if r := <-call.res; errors.Is(r.err, errMuxRetry) || errors.Is(err, net.ErrClosed) {
			return 0, errMuxRetry
		}
		return 0, fmt.Errorf("%w: %w", ErrLost, err)
	}
	return id, nil
}

// flushLeft is the flush of a writer that sends nothing: the writers
// before it that saw it waiting left their frames for it to flush, and
// without it those would wait in the buffer until their callers gave up.
// wmu is held.
func (mc *muxConn) flushLeft() {
	if mc.waiting.Load() != 0 {
		return // the next writer flushes
	}
	mc.mu.Lock()
	failed := mc.err != nil
	mc.mu.Unlock()
	if failed {
		return
	}
	if err := mc.flush(); err != nil {
		mc.fail(err)
	}
}

// A frameWriter is the writing side of a connection, at either end: the
// writers of frames take it in turn (lock), and one that sees others
// waiting leaves its frame in the buffer for the last of them to flush.
type frameWriter struct {
	c       net.Conn
	timeout time.Duration // bounds the writes under the writer
	waiting atomic.Int32  // writers waiting for wmu: the last one flushes
	wmu     sync.Mutex
	bw      *bufio.Writer // under wmu; nil until the first frame (writer)
	wdl     time.Time     // under wmu: the write deadline set
}

// lock takes the writer. Every write under it, the direct one of a large
// body as well as a flush, is bounded by half the timeout to all of it
// from the moment the writer is taken (the deadline is moved only when
// less than half is left: a deadline set per frame would cost a tenth of
// a request).
func (w *frameWriter) lock() {
	w.waiting.Add(1)
	w.wmu.Lock()
	w.waiting.Add(-1)
	if now := time.Now(); w.wdl.Sub(now) < w.timeout/2 {
		w.wdl = now.Add(w.timeout)
		_ = w.c.SetWriteDeadline(w.wdl)
	}
}

// writer returns the connection's write buffer, which its first frame
// allocates; wmu is held.
func (w *frameWriter) writer() *bufio.Writer {
	if w.bw == nil {
		w.bw = bufio.NewWriterSize(w.c, muxBufSize)
	}
	return w.bw
}

// flush flushes the writer; wmu is held.
func (w *frameWriter) flush() error {
	if w.bw == nil || w.bw.Buffered() == 0 {
		return nil
	}
	return w.bw.Flush()
}

// cancel tells the peer that the caller of id has gone.
func (mc *muxConn) cancel(id uint32) {
	mc.lock()
	defer mc.wmu.Unlock()
	f := StartFrame(mc.buf[:0], KindCancel, id)[:FrameHeader]
	mc.buf = f
	_, err := mc.writer().Write(f)
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
		mc.fail(ErrLost)
	}
	return ok
}

// fail ends the connection with err (once): every call in flight gets the
// error, and new requests open a new connection.
func (mc *muxConn) fail(err error) {
	mc.doneOnce.Do(func() {
		mc.t.forget(mc)
		mc.idle.Stop()
		if !errors.Is(err, ErrLost) {
			err = fmt.Errorf("%w: %w", ErrLost, err)
		}
		mc.mu.Lock() // before the socket closes: a request not yet sent is sent elsewhere
		mc.err = err
		calls := mc.calls
		mc.calls = nil
		mc.mu.Unlock()
		_ = mc.c.Close()
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
		mc.fail(ErrLost)
	}
}

// touch records a use of the connection: a request begins or ends.
func (mc *muxConn) touch() { mc.lastUse.Store(int64(time.Since(mc.born))) }

// idleCheck runs when the idle timer fires: it closes the connection if
// no request is under way and none has begun or ended for
// muxIdleTimeout; else it sets the timer for muxIdleTimeout after the
// last use (or after now, while a request is under way: its end is a
// use).
func (mc *muxConn) idleCheck() {
	select {
	case <-mc.done:
		return
	default:
	}
	unused := time.Since(mc.born) - time.Duration(mc.lastUse.Load())
	if len(mc.slots) > 0 { // a request under way holds a slot until it has ended
		mc.idle.Reset(muxIdleTimeout)
		return
	}
	if unused >= muxIdleTimeout {
		mc.fail(ErrLost)
		return
	}
	mc.idle.Reset(muxIdleTimeout - unused)
}
