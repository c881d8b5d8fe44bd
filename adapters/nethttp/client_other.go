//go:build !js

package nethttp

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"time"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
)

// maxConnsPerPeer bounds the connections NewTransport opens to one peer, so
// that a slow or hung peer cannot make a node open connections without
// bound; a request over it waits for a connection, within its deadline.
const maxConnsPerPeer = 2 * peerhttp.MaxIdleConnsPerHost

// NewTransport returns an http.Transport tuned for peer traffic: up to
// 256 idle keep-alive connections per peer (net/http's default of 2 would
// open and close a connection for most peer requests), at most 512
// connections per peer in all (a group also caps its
// requests in flight to a peer: cache.PeerPolicy.MaxInFlight), no proxy
// (peer traffic stays inside the cluster), bounded dial and TLS handshake
// times. HTTP/2 is used when a peer is reached over TLS (for example an AWS
// Lambda Function URL); plain http peers use HTTP/1.1 keep-alive, which
// costs less CPU per request.
func NewTransport() *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          0, // no global limit; the per-host one applies
		MaxIdleConnsPerHost:   peerhttp.MaxIdleConnsPerHost,
		MaxConnsPerHost:       maxConnsPerPeer,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// transport is what a Client sends its requests with: an
// http.RoundTripper (ClientOptions.Transport, or the default one).
type transport = http.RoundTripper

// transport returns the transport o gives, or, if the platform has one,
// a new one from NewTransport (maxBody bounds the request bodies of the
// js one alone: this one streams them).
func (o *ClientOptions) transport(_ int64) (transport, error) {
	if err := checkPlatform(o.Transport); err != nil {
		return nil, err
	}
	if o.Transport == nil {
		return NewTransport(), nil
	}
	return o.Transport, nil
}

// roundTrip sends preq to the peer and returns its answer once its header
// has arrived. An owner's "102 Processing" (it is loading the key) goes to
// loading, if not nil.
func (c *Client) roundTrip(ctx context.Context, preq protocol.Request, loading protocol.Listener) (peerResponse, error) {
	var body io.Reader
	if preq.Body != nil {
		body = bytes.NewReader(preq.Body)
	}
	rctx := ctx
	if loading != nil {
		rctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
			if code == http.StatusProcessing {
				loading.Loading() // the owner is loading: the asking group waits for it
			}
			return nil
		}})
	}
	req, err := http.NewRequestWithContext(rctx, preq.Method, c.prefix+preq.Path, body)
	if err != nil {
		return peerResponse{}, err
	}
	req.Header = preq.Header
	if preq.Method == http.MethodPost && protocol.ReadOnlyBatch(preq.Path) {
		// Reads: net/http may send them again on a new connection when a
		// kept-alive one turns out closed (a peer restarted at the same
		// address). A nil value sends no header.
		req.Header = req.Header.Clone()
		req.Header["Idempotency-Key"] = nil
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return peerResponse{}, err
	}
	return peerResponse{status: resp.StatusCode, header: resp.Header, size: resp.ContentLength, body: resp.Body}, nil
}
