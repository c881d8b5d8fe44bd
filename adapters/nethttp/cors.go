package nethttp

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
)

// corsAllowHeaders are the request headers a browser peer sends; the
// response headers it must be able to read come after them.
const (
	corsAllowHeaders  = protocol.HeaderPeer + ", " + protocol.HeaderTimestamp + ", " + protocol.HeaderSignature + ", traceparent, tracestate, baggage"
	corsExposeHeaders = protocol.HeaderError + ", " + protocol.HeaderChecksum + ", " + protocol.HeaderSignature + ", " + protocol.HeaderTTL
)

// cors answers a browser's CORS preflight for an allowed origin and adds
// the CORS headers to the answer of an allowed origin's request. It
// reports whether the request has been answered (a preflight).
func cors(allowed []string, w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || len(allowed) == 0 {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	if !slices.Contains(allowed, "*") && !slices.Contains(allowed, origin) {
		return false // no CORS headers: the browser refuses the answer
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		return false
	}
	h.Set("Access-Control-Allow-Methods", http.MethodGet)
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// checkOrigins validates AllowOrigins: "*" or origins such as
// "https://app.example.com" (scheme and host, no path).
func checkOrigins(origins []string) error {
	for _, o := range origins {
		if o == "*" {
			continue
		}
		if n, err := peerhttp.NormalizeURL(o); err != nil || n != strings.ToLower(o) || strings.Count(o, "/") != 2 {
			return fmt.Errorf("geecache: %w: AllowOrigins: %q is not an origin (scheme://host[:port])", cache.ErrConfig, o)
		}
	}
	return nil
}
