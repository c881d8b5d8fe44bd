package mux

import (
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ServerConfig is what a Server needs of its Pool and of the HTTP server
// the Pool is served by.
type ServerConfig struct {
	Handler  http.Handler // the Pool's handler
	BasePath string       // Cluster.BasePath
	// MaxValue is the largest value a PUT carries.
	MaxValue int64
	Logger   *slog.Logger
	// The HTTP server's timeouts, which bound a multiplexed connection
	// as they bound an HTTP/1.1 one.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
}

// A TrackedConn is a connection whose listener caps the connections open
// at once (a Server's, in package nethttp). A Server tells it that it is
// multiplexed (TrackMux: the listener's shutdown stops it) and whether it
// has a request in flight (SetIdle: the cap may close an idle one to make
// room for another).
type TrackedConn interface {
	net.Conn
	TrackMux(stop func()) (untrack func())
	SetIdle(idle bool)
}
