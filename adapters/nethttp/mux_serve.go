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
	"sync"
	"sync/atomic"
	"time"
)

// A multiplexed connection as the serving node has it: it reads the
// request frames, serves each with the Pool's handler, and writes the
// answers (mux_response.go).

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
