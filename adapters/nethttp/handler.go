package nethttp

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/geecache/geecache/adapters/protocol"
	"github.com/geecache/geecache/cache"
)

// A Handler serves the peer protocol for the groups of a registry. It is
// safe for concurrent use.
type Handler struct {
	base string
	srv  *protocol.Server
}

// NewHandler returns a Handler for reg. The options that matter to it are
// WithProtocol, WithBasePath and WithLogger.
func NewHandler(reg *cache.Registry, opts ...Option) *Handler {
	c := newConfig(opts)
	return &Handler{base: c.basePath, srv: protocol.NewServer(reg, c.protoOpts()...)}
}

// ServeHTTP answers a protocol request. The path is taken in its escaped
// form (URL.EscapedPath), so a key containing "/" (sent as "%2F") is one
// key; the base path, if any, is removed first. The load runs with the
// request's context, so it is abandoned when the caller goes away.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	if h.base != "" {
		p, ok := strings.CutPrefix(path, h.base)
		if !ok {
			write(w, protocol.ErrorResponse(protocol.CodeBadRequest,
				"geecache: path "+strconv.Quote(path)+" is outside the base path "+strconv.Quote(h.base)))
			return
		}
		path = p
	}
	write(w, h.srv.Serve(r.Context(), protocol.Request{Method: r.Method, Path: path, Header: r.Header}))
}

// write sends a protocol response as it is.
func write(w http.ResponseWriter, resp protocol.Response) {
	hdr := w.Header()
	for k, v := range resp.Header {
		hdr[k] = v
	}
	hdr["Content-Length"] = []string{strconv.Itoa(len(resp.Body))}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body) // the caller has gone; nothing to do
}
