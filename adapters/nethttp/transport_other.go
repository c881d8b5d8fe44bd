//go:build !js

package nethttp

import (
	"net/http"
	"runtime"
)

// platformReachesPeers reports whether the default transport can reach
// peers here. WASI preview 1 (GOOS=wasip1) has no socket connect: net/http
// compiles, but every dial fails, so a node there reaches no peer unless
// the host provides a transport.
const platformReachesPeers = runtime.GOOS != "wasip1"

// defaultTransport is the transport of a Client or Pool not given one with
// WithTransport: NewTransport's, over sockets, which streams request
// bodies of any size (maxBody is for the js one).
func defaultTransport(_ int64) http.RoundTripper { return NewTransport() }
