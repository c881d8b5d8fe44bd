//go:build js && wasm

package nethttp

import (
	"context"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// transport is what a Client sends its requests with under GOOS=js: the
// host's fetch(), always. net/http's own transport would dial Go's
// in-process fake network under node.js (and NewTransport's tuned dialer
// would keep it off fetch() in browsers too), and linking net/http at all
// would more than double the size of a js/wasm node (see Header in
// adapters/internal/protocol).
type transport = *fetchTransport

// transport returns the fetch transport, which sends request bodies (a
// PUT's value) of up to maxBody bytes, the client's MaxValueBytes.
func (o *ClientOptions) transport(maxBody int64) (transport, error) {
	return &fetchTransport{maxBody: maxBody}, nil
}

// roundTrip sends preq to the peer with fetch() and returns its answer
// once its header has arrived. A fetch() gets no interim answer, so an
// owner's "102 Processing" never reaches the asking group here.
func (c *Client) roundTrip(ctx context.Context, preq protocol.Request, _ protocol.Listener) (peerResponse, error) {
	return c.rt.roundTrip(ctx, preq.Method, c.prefix+preq.Path, preq.Header, preq.Body)
}
