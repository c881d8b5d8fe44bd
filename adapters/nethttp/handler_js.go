//go:build js && wasm

package nethttp

import (
	"context"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// Serve answers a protocol request that the JavaScript host received and
// read whole, for package wasmjs (through hostserve.Of): as ServeHTTP does
// in the other builds, with the same checks in the same order (CORS, the
// base path, the write's admission before its body, the body's limit, no
// body on other requests). escapedPath is the path as sent; body is nil
// for none. The host answers once, so no "102 Processing" is sent. The
// load runs with ctx, abandoned when the caller goes away.
func (h *handler) Serve(ctx context.Context, method, escapedPath string, header protocol.Header, body []byte) protocol.Response {
	var cors protocol.Header // the CORS headers of a browser's request, to add to the answer
	if origin := header.Get("Origin"); origin != "" && len(h.origins) > 0 {
		cors = make(protocol.Header, 4)
		if corsHeaders(h.origins, origin, method, header.Get("Access-Control-Request-Method"), cors) {
			return protocol.Response{Status: 204, Header: cors}
		}
	}
	req, resp, ok := h.admit(ctx, protocol.Request{Method: method, Path: escapedPath, Header: header}, int64(len(body)),
		func(int64) ([]byte, error) { return body, nil })
	if !ok {
		return withHeaders(resp, cors)
	}
	if cors == nil {
		cors = make(protocol.Header, 4)
	}
	return h.srv.ServeInto(ctx, req, cors, nil)
}

// withHeaders returns resp with the fields of extra added to its own
// (resp's header is a refusal's, made for it alone).
func withHeaders(resp protocol.Response, extra protocol.Header) protocol.Response {
	if len(extra) == 0 {
		return resp
	}
	if resp.Header == nil {
		resp.Header = make(protocol.Header, len(extra))
	}
	for k, v := range extra {
		resp.Header[k] = v
	}
	return resp
}
