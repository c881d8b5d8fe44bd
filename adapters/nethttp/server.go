package nethttp

import (
	"net/http"
	"time"
)

// Timeouts and limits of the servers NewServer returns. A peer request has
// no body and a small header, so the read side is kept short: a caller that
// trickles its request holds a connection for at most ServerReadTimeout.
// The write side allows for a slow load from the source (ServerWriteTimeout
// is well above DefaultTimeout, the callers' own bound).
const (
	ServerReadHeaderTimeout = 5 * time.Second
	ServerReadTimeout       = 10 * time.Second
	ServerWriteTimeout      = 2 * DefaultTimeout
	ServerIdleTimeout       = 90 * time.Second
	ServerMaxHeaderBytes    = 16 << 10
)

// NewServer returns an http.Server for peer traffic on addr (as in
// http.Server.Addr) that serves h, typically a Pool or a Handler, with the
// timeouts and header limit above: an http.Server's zero value has none,
// so a peer that opens connections and never finishes its request would
// hold them forever. Use it, or set the same fields, for every node.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: ServerReadHeaderTimeout,
		ReadTimeout:       ServerReadTimeout,
		WriteTimeout:      ServerWriteTimeout,
		IdleTimeout:       ServerIdleTimeout,
		MaxHeaderBytes:    ServerMaxHeaderBytes,
	}
}
