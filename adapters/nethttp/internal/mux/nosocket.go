//go:build wasip1

package mux

import (
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/geecache/geecache/cache"
)

// Under GOOS=wasip1 there are no sockets, so the carriage is left out of
// the build: these stand in for what package nethttp calls of it.

// A Server takes no connection over here: an upgrade to the carriage is
// answered as a plain request, as by a node that does not know it (the
// asking peer then goes on over HTTP/1.1).
type Server struct{}

func NewServer(ServerConfig) *Server                          { return &Server{} }
func (*Server) Serve(http.ResponseWriter, *http.Request) bool { return false }
func (*Server) StopAll()                                      {}
func (*Server) Leave()                                        {}

// NewTransport fails: Multiplex needs sockets.
func NewTransport(http.RoundTripper, string, int64, time.Duration) (http.RoundTripper, error) {
	return nil, fmt.Errorf("geecache: %w: Multiplex needs sockets, which GOOS=%s does not have", cache.ErrConfig, runtime.GOOS)
}
