//go:build !js

package protocol

import "net/http"

// Header holds a request's or an answer's header fields, keyed by their
// canonical names (X-Geecache-Peer). Wherever net/http is linked it is
// net/http's own Header, so a binding hands its requests' fields over as
// they are; under GOOS=js, where a node is served by its JavaScript host
// and reaches its peers with the host's fetch(), it is a map of the same
// shape and methods (header_js.go), so that the node need not link
// net/http (and the TLS and X.509 code its initialisation keeps: most of
// a js/wasm binary's size).
type Header = http.Header

// statusText is HTTP's reason phrase for code (http.StatusText).
func statusText(code int) string { return http.StatusText(code) }
