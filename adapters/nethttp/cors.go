package nethttp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
)

// corsAllowHeaders are the request headers a browser peer sends: on every
// request the peer's mark, with a secret its signature, with a propagator
// the trace context; on a batch's POST (GetMany, RemoveMany, Purge) also
// its body's checksum and its Content-Type, which is not one a browser
// sends without asking. The response headers it must be able to read come
// after them.
const (
	corsAllowHeaders = protocol.HeaderPeer + ", " + protocol.HeaderTimestamp + ", " + protocol.HeaderSignature + ", " +
		protocol.HeaderChecksum + ", Content-Type, traceparent, tracestate, baggage"
	corsExposeHeaders = protocol.HeaderError + ", " + protocol.HeaderChecksum + ", " + protocol.HeaderSignature + ", " + protocol.HeaderTTL
)

// corsHeaders adds to h, an answer's header, the CORS headers of a
// request from origin (not empty) with method, and acrm, its
// Access-Control-Request-Method. It reports whether the request is an
// allowed origin's preflight, to be answered 204 with h alone.
func corsHeaders(allowed []string, origin, method, acrm string, h protocol.Header) (preflight bool) {
	h.Add("Vary", "Origin")
	if !slices.Contains(allowed, "*") && !slices.Contains(allowed, origin) {
		return false // no CORS headers: the browser refuses the answer
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if method != "OPTIONS" || acrm == "" {
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET")
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", "600")
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
