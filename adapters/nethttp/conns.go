//go:build !js

package nethttp

import (
	"bytes"
	"crypto/tls"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// A limitListener is a listener a Server serves: it caps the connections
// open at once (ServerOptions.MaxConns) and answers requests net/http
// cannot parse as the protocol does.
type limitListener struct {
	net.Listener
	sem        chan struct{} // a slot per open connection; nil: no cap
	done       chan struct{} // closed by Close
	closeOnce  sync.Once
	badRequest func(detail string) []byte // the answer to a malformed request; nil: net/http's

	mu      sync.Mutex
	conns   map[*serverConn]uint64 // open connections: 0, or when it went idle (a sequence number)
	seq     uint64
	waiting bool                   // Accept waits for a slot
	mux     map[*serverConn]func() // the multiplexed connections taken over: their stop
}

// Accept returns the next connection once it has a slot: at the cap it
// closes the longest-idle connection, if any, and otherwise waits for one
// to close or go idle (which is then closed).
func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if l.sem != nil && !l.acquire() {
		_ = c.Close()
		return nil, net.ErrClosed
	}
	sc := &serverConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[sc] = 0
	l.mu.Unlock()
	return sc, nil
}

// acquire takes a slot; it returns false if the listener is closed first.
func (l *limitListener) acquire() bool {
	select {
	case l.sem <- struct{}{}:
		return true
	default:
	}
	l.mu.Lock()
	l.waiting = true
	var idlest *serverConn
	for c, since := range l.conns {
		if since != 0 && (idlest == nil || since < l.conns[idlest]) {
			idlest = c
		}
	}
	l.mu.Unlock()
	if idlest != nil {
		_ = idlest.Close()
	}
	defer func() {
		l.mu.Lock()
		l.waiting = false
		l.mu.Unlock()
	}()
	select {
	case l.sem <- struct{}{}:
		return true
	case <-l.done:
		return false
	}
}

// Close closes the listener; an Accept waiting for a slot returns.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() {
		close(l.done)
		l.mu.Lock()
		stops := slices.Collect(maps.Values(l.mux))
		l.mu.Unlock()
		for _, stop := range stops {
			stop()
		}
	})
	return l.Listener.Close()
}

// trackConnState is the ConnState of a Server: it records which
// connections are idle, and closes one that goes idle while a new
// connection waits for its slot.
func trackConnState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(*serverConn)
	if !ok {
		return
	}
	if state == http.StateActive {
		sc.unanswered.Store(true) // a request began: see Write
	}
	sc.SetIdle(state == http.StateIdle)
}

// A serverConn is a connection a limitListener accepted.
type serverConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
	// unanswered is set when a request begins (trackConnState's
	// StateActive) and cleared by the first Write after it: only that
	// Write may be net/http's refusal of a request it could not parse.
	// A later one is a handler's (a body can hold any bytes).
	unanswered atomic.Bool
}

// Close closes the connection and frees its slot.
func (c *serverConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		if c.l.sem != nil {
			<-c.l.sem
		}
	})
	return err
}

// SetIdle records that the connection is idle (no request in flight) or
// busy: an idle one is closed at once if a new connection waits for its
// slot, and may be closed later to make room for one.
func (c *serverConn) SetIdle(idle bool) {
	l := c.l
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

// TrackMux records that the connection is multiplexed (package mux), so
// that closing its listener (the Server's Shutdown or Close) stops it;
// untrack forgets it.
func (c *serverConn) TrackMux(stop func()) (untrack func()) {
	l := c.l
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

// CloseWrite shuts the writing side down, if the connection can (net/http
// does before it closes a connection whose request it refused).
func (c *serverConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Write writes p, unless p is net/http's plain answer to a request it
// could not parse: then it writes the protocol's answer instead. Only the
// first Write since a request began can be that answer.
func (c *serverConn) Write(p []byte) (int, error) {
	if c.l.badRequest != nil && c.unanswered.Load() {
		c.unanswered.Store(false)
		if detail, ok := netHTTPBadRequest(p); ok {
			if _, err := c.Conn.Write(c.l.badRequest(detail)); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return c.Conn.Write(p)
}

// What net/http writes, in one Write, for a request it cannot parse:
// the status line, perhaps with ": detail", then these header fields and
// a plain-text body (net/http's server.go, conn.serve).
const (
	netHTTPBadRequestLine = "HTTP/1.1 400 Bad Request"
	netHTTPErrorHeaders   = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
)

// netHTTPBadRequest reports whether p is net/http's answer to a request it
// could not parse, and returns the detail it gives, if any. The header of
// a handler's answer never matches: net/http adds a Date and a length.
func netHTTPBadRequest(p []byte) (detail string, ok bool) {
	rest, ok := bytes.CutPrefix(p, []byte(netHTTPBadRequestLine))
	if !ok {
		return "", false
	}
	line, _, ok := bytes.Cut(rest, []byte(netHTTPErrorHeaders))
	if !ok || bytes.Contains(line, []byte("\r\n")) {
		return "", false
	}
	if len(line) == 0 {
		return "", true
	}
	d, ok := bytes.CutPrefix(line, []byte(": "))
	return string(d), ok
}

// badRequestAnswer returns the protocol's answer, as HTTP/1.1 bytes, to a
// request net/http could not parse: 400 bad_request, sealed by s, and the
// connection closed (as net/http does).
func badRequestAnswer(s *protocol.Server, detail string) []byte {
	msg := "malformed request: an invalid escape in the path (such as %zz) or a header that does not parse"
	if detail != "" {
		msg = "malformed request: " + detail
	}
	resp := s.Seal(protocol.Request{}, protocol.ErrorResponse(protocol.CodeBadRequest, msg))
	resp.Header.Set("Content-Length", strconv.Itoa(resp.Len()))
	resp.Header.Set("Connection", "close")
	var b bytes.Buffer
	b.WriteString(netHTTPBadRequestLine + "\r\n")
	_ = resp.Header.Write(&b) // a bytes.Buffer's Write never fails
	b.WriteString("\r\n")
	_, _ = resp.WriteTo(&b)
	return b.Bytes()
}
