//go:build wasip1

package nethttp

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime"

	"github.com/geecache/geecache/cache"
)

// Under GOOS=js and GOOS=wasip1 there are no sockets, so the multiplexed
// carriage (PoolOptions.Multiplex, mux_*.go) is left out of the build:
// these stand in for what the rest of the package calls of it.

// A muxServer takes no connection over here: an upgrade to the carriage
// is answered as a plain request, as by a node that does not know it (the
// asking peer then goes on over HTTP/1.1).
type muxServer struct{}

func newMuxServer(http.Handler, string, int64, *slog.Logger) *muxServer { return &muxServer{} }

func (*muxServer) isUpgrade(*http.Request) bool                  { return false }
func (*muxServer) serve(http.ResponseWriter, *http.Request) bool { return false }
func (*muxServer) stopAll()                                      {}
func (*muxServer) leave()                                        {}

// A muxTrack has no multiplexed connection to know of.
type muxTrack struct{}

// stopMux has no multiplexed connection to stop.
func (muxTrack) stopMux() {}

// multiplexed fails: Multiplex needs sockets.
func multiplexed(clientConfig) (http.RoundTripper, error) {
	return nil, fmt.Errorf("geecache: %w: Multiplex needs sockets, which GOOS=%s does not have", cache.ErrConfig, runtime.GOOS)
}
