//go:build !js && !wasip1

package mux

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// A Server takes the upgrades to the multiplexed carriage over, for a
// Pool: every node accepts them, whatever its own PoolOptions.Multiplex.
// Each request frame is served by the Pool's handler, as an HTTP request
// would be, so every frame is checked, signed and limited by the same
// code.
type Server struct {
	h        http.Handler // the Pool's handler
	base     string
	maxFrame int64
	log      *slog.Logger
	// readTimeout bounds the arrival of a frame from its first byte to
	// its end, as a Server's ReadTimeout bounds an HTTP request's;
	// idleTimeout closes a connection with no request in flight, as a
	// Server's IdleTimeout closes a keep-alive connection; writeTimeout
	// bounds the writes as its WriteTimeout bounds an answer's.
	readTimeout, writeTimeout, idleTimeout time.Duration

	left atomic.Bool // the drain ended (Leave): no new connection

	mu    sync.Mutex
	conns map[*muxServerConn]struct{}
}

// NewServer returns the Server of a Pool.
func NewServer(c ServerConfig) *Server {
	// A request carries a value (a PUT) or a batch's keys, whichever limit
	// is higher.
	maxBody := max(c.MaxValue, protocol.MaxBatchBytes)
	return &Server{h: c.Handler, base: c.BasePath, maxFrame: muxMaxFrame(maxBody), log: c.Logger,
		readTimeout: c.ReadTimeout, writeTimeout: c.WriteTimeout, idleTimeout: c.IdleTimeout,
		conns: map[*muxServerConn]struct{}{}}
}

// Serve takes r over if it asks for the multiplexed carriage, and serves
// its connection's frames until it closes; it returns false, with r left
// for the handler, if r is not an upgrade this node takes or its
// connection cannot be taken over (HTTP/2).
func (s *Server) Serve(w http.ResponseWriter, r *http.Request) bool {
	return s.isUpgrade(r) && s.serve(w, r)
}

// isUpgrade reports whether r asks for the multiplexed carriage, and the
// node takes it: one whose drain has ended (Leave) answers it as a plain
// request, so that its peers ask it over HTTP/1.1.
func (s *Server) isUpgrade(r *http.Request) bool {
	if s.left.Load() {
		return false
	}
	up := r.Header["Upgrade"] // as net/http stores it: no canonicalisation on every request
	return len(up) == 1 && r.Method == http.MethodGet && strings.EqualFold(up[0], Protocol) &&
		r.URL.EscapedPath() == s.base+Path && headerHasToken(r.Header, "Connection", "upgrade")
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
// over (HTTP/2).
func (s *Server) serve(w http.ResponseWriter, r *http.Request) bool {
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	_ = c.SetDeadline(time.Time{}) // the Server's deadlines were for one request
	sc := &muxServerConn{s: s, frameWriter: frameWriter{c: c, timeout: s.writeTimeout}, remote: r.RemoteAddr, host: r.Host, base: context.WithoutCancel(r.Context()),
		goaway: headerHasToken(r.Header, Features, GoAway), interims: headerHasToken(r.Header, Features, Interims),
		slots: make(chan struct{}, MaxInFlight), cancels: map[uint32]context.CancelFunc{}}
	// The 101 goes before any frame: a go-away sent at once waits for it.
	sc.wmu.Lock()
	// Known before the 101 is sent, so that a Pool.Close or a shutdown
	// after the peer has it stops the connection.
	s.mu.Lock()
	s.conns[sc] = struct{}{}
	s.mu.Unlock()
	var untrack func()
	if lc, ok := c.(TrackedConn); ok { // a Server's: its shutdown stops the connection
		untrack = lc.TrackMux(sc.stop)
		sc.lc = lc
		lc.SetIdle(true) // no request yet
	}
	_ = c.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + Protocol + "\r\n\r\n")
	if brw.Flush() != nil {
		_ = c.Close() // serve ends at once
	}
	sc.wmu.Unlock()
	sc.serve(brw.Reader)
	if untrack != nil {
		untrack()
	}
	s.mu.Lock()
	delete(s.conns, sc)
	s.mu.Unlock()
	return true
}

// Leave is the end of the Pool's drain: the peers' connections go away
// (StopAll), and new ones are refused, so that the requests the peers
// still send go over HTTP/1.1, which the Server's shutdown finishes.
func (s *Server) Leave() {
	s.left.Store(true)
	s.StopAll()
}

// StopAll stops every connection: each tells its peer to go away (if the
// peer understands it) and ends once its requests in flight are answered.
func (s *Server) StopAll() {
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
