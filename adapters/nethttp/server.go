//go:build !js

package nethttp

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
)

// Timeouts and limits of the servers NewServer returns (its doc states
// them). A peer request has no body and a small header, so the read side
// is kept short: a caller that trickles its request holds a connection for
// at most serverReadTimeout. The write side allows for a slow load from
// the source (serverWriteTimeout is well above the callers' own bound,
// ClientOptions.Timeout's default).
const (
	serverReadHeaderTimeout = 5 * time.Second
	serverReadTimeout       = 10 * time.Second
	serverWriteTimeout      = 2 * peerhttp.Timeout
	serverIdleTimeout       = 90 * time.Second
	serverMaxHeaderBytes    = 16 << 10
)

// defaultMaxConns is ServerOptions.MaxConns when it is 0: memcached's
// default connection limit.
const defaultMaxConns = 1024

// ServerOptions configures a Server, with the conventions of
// PoolOptions.
type ServerOptions struct {
	// MaxConns caps the connections open at once on each listener the
	// Server serves, so that callers that open connections and hold them
	// cannot make the node run out of memory or file descriptors. 0 means
	// 1024 (memcached's default); a negative value means no cap. At the
	// cap the Server stops accepting: a new connection waits, unserved,
	// until another one closes. To make room for it the Server closes its
	// longest-idle keep-alive connection (or multiplexed one with no
	// request in flight: PoolOptions.Multiplex) at once, as the idle
	// timeout would later (a client that was about to reuse it sends its
	// request on a new connection). Each peer opens at most 512
	// connections to the node; beyond the cap, their requests wait for a
	// connection within their own deadlines.
	MaxConns int
}

// A Server is an http.Server for peer traffic: NewServer's timeouts and
// header limit, a cap on its connections (ServerOptions.MaxConns), and
// the protocol's answer (400 bad_request) to a request net/http cannot
// parse, such as a path with an invalid escape ("%zz"), which net/http
// refuses with a plain 400 before any handler sees it. Start it with its
// own Serve, ServeTLS, ListenAndServe or ListenAndServeTLS, which apply
// the cap; those of the embedded http.Server do not. Stop it with Close
// (at once) or Shutdown (once the requests in flight are answered);
// neither drains the node (Pool.Drain). Its ConnState is set
// (to find idle connections); a caller that sets its own should call the
// one it replaces.
type Server struct {
	*http.Server
	maxConns int              // < 0: no cap
	proto    *protocol.Server // seals the answer to a request that does not parse
}

// NewServer returns a Server for peer traffic on addr (as in
// http.Server.Addr) that serves h, typically a Pool, with
// timeouts and a header limit: ReadHeaderTimeout 5 s, ReadTimeout 10 s,
// WriteTimeout 20 s (a slow load from the source), IdleTimeout 90 s and
// MaxHeaderBytes 16 KiB. An http.Server's zero value has none, so a peer
// that opens connections and never finishes its request would hold them
// forever. opts may be nil for the defaults. Use it for every node. A
// request net/http cannot parse is answered as the protocol says (400
// bad_request), unless the connection is TLS; the answer is signed when h
// is a Pool with a Secret.
func NewServer(addr string, h http.Handler, opts *ServerOptions) *Server {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxConns == 0 {
		o.MaxConns = defaultMaxConns
	}
	s := &Server{
		Server: &http.Server{
			Addr:              addr,
			Handler:           h,
			ReadHeaderTimeout: serverReadHeaderTimeout,
			ReadTimeout:       serverReadTimeout,
			WriteTimeout:      serverWriteTimeout,
			IdleTimeout:       serverIdleTimeout,
			MaxHeaderBytes:    serverMaxHeaderBytes,
			ConnState:         trackConnState,
		},
		maxConns: o.MaxConns,
	}
	if p, ok := h.(*Pool); ok {
		s.proto = p.handler.srv
	} else {
		// A router with the protocol under it, or another handler: the
		// answer is sealed without a secret (a signed caller takes it for
		// a broken peer, which a request that does not parse is anyway).
		s.proto, _ = protocol.NewServer(cache.NewRegistry(), &protocol.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	}
	return s
}

// Close stops the Server at once: it closes its listeners and its HTTP
// connections, cutting the requests in flight (their callers load the
// keys elsewhere), and has the multiplexed connections it serves
// (PoolOptions.Multiplex) close once their requests in flight are
// answered. It does not drain the node (Pool.Drain) nor close its Pool
// (Pool.Close); do both Closes to stop a node at once. It returns the
// error of closing the listeners (see http.Server.Close).
func (s *Server) Close() error { return s.Server.Close() }

// Shutdown stops the Server gracefully: it closes its listeners, so that
// no new connection is taken, and waits until every request in flight is
// answered, or until ctx ends (then it returns ctx's error and leaves the
// connections still busy open: Close them). Multiplexed connections go
// away as at Close, without being waited for. Shutdown does not drain the node: for a graceful
// stop, leave the discovery, run Pool.Drain (which keeps the node serving
// for PoolOptions.DrainFor and offers its keys), then Shutdown, then
// Pool.Close. See http.Server.Shutdown.
func (s *Server) Shutdown(ctx context.Context) error { return s.Server.Shutdown(ctx) }

// Serve serves l (see http.Server.Serve) through the connection cap.
func (s *Server) Serve(l net.Listener) error { return s.Server.Serve(s.listener(l)) }

// ServeTLS serves l over TLS (see http.Server.ServeTLS) through the
// connection cap.
func (s *Server) ServeTLS(l net.Listener, certFile, keyFile string) error {
	return s.Server.ServeTLS(s.listener(l), certFile, keyFile)
}

// ListenAndServe listens on the TCP address s.Addr (":http" if empty) and
// serves it with Serve. Under GOOS=js and GOOS=wasip1, where nothing can
// reach a listener of the program, it returns an error wrapping
// cache.ErrConfig at once.
func (s *Server) ListenAndServe() error {
	if err := checkListen(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addrOr(s.Addr, ":http"))
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// ListenAndServeTLS listens on the TCP address s.Addr (":https" if empty)
// and serves it with ServeTLS; under GOOS=js and GOOS=wasip1 it fails as
// ListenAndServe does.
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	if err := checkListen(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addrOr(s.Addr, ":https"))
	if err != nil {
		return err
	}
	return s.ServeTLS(ln, certFile, keyFile)
}

func addrOr(addr, def string) string {
	if addr == "" {
		return def
	}
	return addr
}

// listener returns l with the server's connection cap and bad-request
// answer.
func (s *Server) listener(l net.Listener) net.Listener {
	ll := &limitListener{Listener: l, done: make(chan struct{}), conns: map[*serverConn]uint64{}}
	if s.maxConns > 0 {
		ll.sem = make(chan struct{}, s.maxConns)
	}
	if s.proto != nil {
		ll.badRequest = func(detail string) []byte { return badRequestAnswer(s.proto, detail) }
	}
	return ll
}
