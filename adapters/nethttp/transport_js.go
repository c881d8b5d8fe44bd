//go:build js && wasm

package nethttp

import "net/http"

// platformReachesPeers reports whether the default transport can reach
// peers here: under GOOS=js it sends them through the host's fetch().
const platformReachesPeers = true

// defaultTransport is the transport of a Client or Pool not given one with
// WithTransport. Under GOOS=js it is a fetchTransport: net/http's own
// transport would dial Go's in-process fake network under node.js, and
// NewTransport's tuned dialer would keep it off fetch() in browsers too.
// It sends request bodies (a PUT's value) of up to maxBody bytes, the
// client's MaxValueBytes.
func defaultTransport(maxBody int64) http.RoundTripper { return &fetchTransport{maxBody: maxBody} }
