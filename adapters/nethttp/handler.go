package nethttp

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
)

// A handler serves the peer protocol for the groups of a registry: the
// serving side of a Pool. It is safe for concurrent use.
type handler struct {
	base    string
	srv     *protocol.Server
	origins []string  // AllowOrigins
	headers sync.Pool // of protocol.Header: the answers' fields, while a 102 may be written (net/http)
}

// newHandler returns a handler for reg. opts may be nil for the defaults.
// It fails, with an error wrapping cache.ErrConfig, for options that
// cannot work.
func newHandler(reg *cache.Registry, opts *handlerOptions) (*handler, error) {
	var o handlerOptions
	if opts != nil {
		o = *opts
	}
	if err := peerhttp.CheckBasePath(o.BasePath); err != nil {
		return nil, err
	}
	if err := checkOrigins(o.AllowOrigins); err != nil {
		return nil, err
	}
	if o.Self != "" {
		var err error
		if o.Self, err = peerhttp.NormalizeURL(o.Self); err != nil {
			return nil, err
		}
	}
	srv, err := protocol.NewServer(reg, &protocol.ServerOptions{Secret: o.Secret, UnsignedWrites: o.UnsignedWrites, Self: o.Self, MaxValueBytes: o.MaxValueBytes,
		MaxSkew: o.MaxSkew, HideErrors: o.HideErrors, Logger: o.Logger, Propagator: o.Propagator})
	if err != nil {
		return nil, err
	}
	return &handler{base: o.BasePath, srv: srv, origins: slices.Clone(o.AllowOrigins),
		headers: sync.Pool{New: func() any { return make(protocol.Header, 4) }}}, nil
}

// basePathless returns req with the base path cut off its path, or the
// refusal of a request outside the base path.
func (h *handler) basePathless(req protocol.Request) (protocol.Request, protocol.Response, bool) {
	if h.base == "" {
		return req, protocol.Response{}, true
	}
	p, ok := strings.CutPrefix(req.Path, h.base)
	if !ok {
		return req, h.srv.Seal(req, protocol.ErrorResponse(protocol.CodeBadRequest,
			"path is outside the base path "+strconv.Quote(h.base))), false
	}
	req.Path = p
	return req, protocol.Response{}, true
}

// admit runs the checks a request passes before it is served, in this
// order on every platform: the base path (cut off req's path), a write's
// admission before its body is read, the body's limit, no body on other
// requests. size is the body's announced length (-1: not announced);
// read reads the body of a PUT or a POST, at most limit+1 bytes of it.
// If a check fails, admit returns the answer to send instead.
func (h *handler) admit(ctx context.Context, req protocol.Request, size int64, read func(limit int64) ([]byte, error)) (protocol.Request, protocol.Response, bool) {
	req, resp, ok := h.basePathless(req)
	if !ok {
		return req, resp, false
	}
	if req.Method != "PUT" && req.Method != "POST" {
		if size != 0 {
			return req, h.bodyless(req), false
		}
		return req, protocol.Response{}, true
	}
	if resp, ok := h.srv.Admit(ctx, req); !ok {
		return req, resp, false
	}
	limit := h.bodyLimit(req.Method)
	if size > limit {
		return req, h.tooLarge(req), false
	}
	body, err := read(limit)
	switch {
	case err != nil:
		return req, h.srv.Seal(req, protocol.ErrorResponse(protocol.CodeBadRequest, "reading the body failed")), false
	case int64(len(body)) > limit:
		return req, h.tooLarge(req), false
	}
	req.Body = body
	return req, protocol.Response{}, true
}

// bodyLimit is the largest body of a request with method: a value (PUT),
// or a batch's keys (POST).
func (h *handler) bodyLimit(method string) int64 {
	if method == "POST" {
		return protocol.MaxBatchBytes // a batch's keys
	}
	return h.srv.MaxValueBytes()
}

// tooLarge is the refusal of a body over bodyLimit.
func (h *handler) tooLarge(req protocol.Request) protocol.Response {
	return h.srv.Seal(req, protocol.ErrorResponse(protocol.CodeTooLarge, "the value is over the size limit"))
}

// bodyless is the refusal of a request that has a body but should not.
func (h *handler) bodyless(req protocol.Request) protocol.Response {
	return h.srv.Seal(req, protocol.ErrorResponse(protocol.CodeBadRequest, "a peer request has no body"))
}
