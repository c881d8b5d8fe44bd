package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The serving side of the framed carriage of muxrt_test.go.

// muxHandler serves h over HTTP and, after an Upgrade, over frames.
type muxHandler struct {
	h     http.Handler
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool
}

func (m *muxHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != muxPath || r.Header.Get("Upgrade") != muxUpgrade {
		m.h.ServeHTTP(w, r)
		return
	}
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	_ = c.SetDeadline(time.Time{}) // the Server's read and write deadlines were for one request
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: " + muxUpgrade + "\r\nConnection: Upgrade\r\n\r\n")
	if brw.Flush() != nil {
		_ = c.Close()
		return
	}
	m.mu.Lock()
	m.conns[c] = true
	m.mu.Unlock()
	m.wg.Go(func() { m.serve(c, brw.Reader, r.RemoteAddr) })
}

func (m *muxHandler) close() {
	m.mu.Lock()
	for c := range m.conns {
		_ = c.Close()
	}
	m.mu.Unlock()
	m.wg.Wait()
}

func (m *muxHandler) serve(c net.Conn, br *bufio.Reader, remote string) {
	defer func() {
		m.mu.Lock()
		delete(m.conns, c)
		m.mu.Unlock()
		_ = c.Close()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sw := &muxServerWriter{c: c, bw: bufio.NewWriterSize(c, 64<<10)}
	var handlers sync.WaitGroup
	// Requests run on reused goroutines: a new one per request would
	// grow its stack every time (12% of the CPU in a profile).
	work := make(chan func())
	for {
		id, kind, payload, err := muxReadFrame(br)
		if err != nil || kind != muxKindReq {
			break
		}
		job := func() {
			p := muxParser{b: payload}
			method, uri := p.string(), p.string()
			h := p.header()
			u, err := url.ParseRequestURI(uri)
			if p.err != nil || err != nil {
				_ = c.Close()
				return
			}
			req := (&http.Request{Method: method, URL: u, RequestURI: uri, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: h, Body: http.NoBody, Host: u.Host, RemoteAddr: remote}).WithContext(ctx)
			if len(p.b) > 0 {
				req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(p.b)), int64(len(p.b))
			}
			rw := &muxResponseWriter{id: id, header: http.Header{}, sw: sw}
			m.h.ServeHTTP(rw, req)
			rw.finish()
		}
		select {
		case work <- job:
		default:
			handlers.Go(func() {
				job()
				for j := range work {
					j()
				}
			})
		}
	}
	close(work)
	cancel()
	handlers.Wait()
}

// muxServerWriter writes the answers of one connection, one frame at a
// time; the last writer waiting flushes for all.
type muxServerWriter struct {
	c       net.Conn
	waiting atomic.Int32
	mu      sync.Mutex
	bw      *bufio.Writer // under mu
	failed  bool          // under mu
}

func (sw *muxServerWriter) lock() {
	sw.waiting.Add(1)
	sw.mu.Lock()
	sw.waiting.Add(-1)
}

func (sw *muxServerWriter) write(p []byte) {
	if !sw.failed {
		if _, err := sw.bw.Write(p); err != nil {
			sw.failed = true
			_ = sw.c.Close()
		}
	}
}

func (sw *muxServerWriter) unlock() {
	if !sw.failed && sw.waiting.Load() == 0 && sw.bw.Flush() != nil {
		sw.failed = true
		_ = sw.c.Close()
	}
	sw.mu.Unlock()
}

// muxResponseWriter sends an answer as one frame: a body of announced
// length (Content-Length) straight to the connection, holding it for the
// frame; another buffered until the handler returns. A 1xx goes at once,
// as net/http sends it.
type muxResponseWriter struct {
	id        uint32
	header    http.Header
	status    int
	sw        *muxServerWriter
	streaming bool  // holding sw, writing the body
	left      int64 // of the announced body
	body      []byte
}

func (w *muxResponseWriter) Header() http.Header { return w.header }

func (w *muxResponseWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	if code < 200 {
		f := muxFrameStart(nil, w.id, muxKindInterm)
		f = binary.BigEndian.AppendUint16(f, uint16(code))
		f = muxAppendHeader(f, nil)
		muxFrameEnd(f)
		w.sw.lock()
		w.sw.write(f)
		w.sw.unlock()
		return
	}
	w.status = code
}

func (w *muxResponseWriter) head(bodyLen int) []byte {
	f := muxFrameStart(make([]byte, 0, 256), w.id, muxKindAnswer)
	f = binary.BigEndian.AppendUint16(f, uint16(w.status))
	f = muxAppendHeader(f, w.header)
	binary.BigEndian.PutUint32(f[5:9], uint32(len(f)-9+bodyLen))
	return f
}

func (w *muxResponseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if !w.streaming && w.body == nil {
		if n, err := strconv.ParseInt(w.header.Get("Content-Length"), 10, 64); err == nil && n >= int64(len(p)) {
			w.sw.lock()
			w.sw.write(w.head(int(n)))
			w.streaming, w.left = true, n
		}
	}
	if w.streaming {
		if int64(len(p)) > w.left {
			return 0, errors.New("mux: body longer than announced")
		}
		w.left -= int64(len(p))
		w.sw.write(p)
		return len(p), nil
	}
	w.body = append(w.body, p...)
	return len(p), nil
}

func (w *muxResponseWriter) finish() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.streaming {
		if w.left != 0 { // the frame is cut: the connection cannot go on
			w.sw.failed = true
			_ = w.sw.c.Close()
		}
		w.sw.unlock()
		return
	}
	w.sw.lock()
	w.sw.write(w.head(len(w.body)))
	w.sw.write(w.body)
	w.sw.unlock()
}
