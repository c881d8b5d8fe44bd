package protocol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A Request is a protocol request as a binding received it.
type Request struct {
	// Method is the HTTP method ("GET").
	Method string
	// Path is the escaped path relative to the node's base path, so it
	// starts with Prefix. Bindings must pass the path as it was sent
	// (url.URL.EscapedPath), never a decoded one.
	Path string
	// Header holds the request headers; only the protocol's are read.
	Header http.Header
}

// A Response is what a Server answers; a binding sends Status, Header and
// Body as they are.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header holds Content-Type, and X-Geecache-Error (and Allow for 405)
	// on errors. Content-Length is left to the binding.
	Header http.Header
	// Body is the raw value on 200, a plain-text message otherwise. The
	// Server does not keep it, so a binding may use it freely.
	Body []byte
}

// Code returns the response's error code, or "" for a 200.
func (r Response) Code() Code { return Code(r.Header.Get(HeaderError)) }

// A Server answers protocol requests for the groups of a registry. It does
// no I/O of its own, so every binding shares it. It is safe for concurrent
// use.
type Server struct {
	reg *cache.Registry
	cfg config
}

// NewServer returns a Server for the groups of reg. The options that
// matter to it are WithSecret, WithMaxValueBytes, WithMaxSkew, WithClock and
// WithLogger.
func NewServer(reg *cache.Registry, opts ...Option) *Server {
	return &Server{reg: reg, cfg: newConfig(opts)}
}

// MaxValueBytes returns the largest value the Server sends.
func (s *Server) MaxValueBytes() int64 { return s.cfg.maxValue }

// Serve answers req. It checks, in order: the method (405), the signature
// when a secret is set (401, before anything is parsed or loaded), the path
// (400), the group (404 unknown_group); then it loads the key with
// Group.GetLocal for a peer request (one carrying HeaderPeer) or Group.Get
// otherwise, and answers 200 with the value, 404 not_found, 500 load_error,
// or 413 too_large for a value over the size limit. ctx is passed to the
// load; it should end when the caller goes away.
func (s *Server) Serve(ctx context.Context, req Request) Response {
	if req.Method != http.MethodGet {
		r := ErrorResponse(CodeMethodNotAllowed, "geecache: method "+strconv.Quote(req.Method)+" not allowed, use GET")
		r.Header.Set("Allow", http.MethodGet)
		return r
	}
	if s.cfg.secret != nil {
		if err := verify(req.Header, s.cfg.secret, s.cfg.now(), s.cfg.maxSkew, req.Method, req.Path); err != nil {
			s.cfg.logger.LogAttrs(ctx, slog.LevelWarn, "geecache: rejected unauthenticated request",
				slog.String("path", req.Path), slog.String("reason", err.Error()))
			return ErrorResponse(CodeUnauthorized, "geecache: unauthorized: "+err.Error())
		}
	}
	groupName, key, err := ParsePath(req.Path)
	if err != nil {
		return ErrorResponse(CodeBadRequest, err.Error())
	}
	g := s.reg.Lookup(groupName)
	if g == nil {
		return ErrorResponse(CodeUnknownGroup, "geecache: no such group: "+strconv.Quote(groupName))
	}
	var view cache.ByteView
	if req.Header.Get(HeaderPeer) != "" {
		view, err = g.GetLocal(ctx, key)
	} else {
		view, err = g.Get(ctx, key)
	}
	if err != nil {
		if errors.Is(err, getter.ErrNotFound) {
			return ErrorResponse(CodeNotFound, err.Error())
		}
		s.cfg.logger.LogAttrs(ctx, slog.LevelWarn, "geecache: load failed",
			slog.String("group", groupName), slog.String("key", key), slog.String("err", err.Error()))
		return ErrorResponse(CodeLoadError, err.Error())
	}
	if n := int64(view.Len()); n > s.cfg.maxValue {
		s.cfg.logger.LogAttrs(ctx, slog.LevelWarn, "geecache: value over size limit",
			slog.String("group", groupName), slog.String("key", key), slog.Int64("bytes", n), slog.Int64("limit", s.cfg.maxValue))
		return ErrorResponse(CodeTooLarge, fmt.Sprintf("geecache: group %q, key %q: value of %d bytes exceeds the limit of %d bytes", groupName, key, n, s.cfg.maxValue))
	}
	return Response{
		Status: http.StatusOK,
		Header: http.Header{"Content-Type": {"application/octet-stream"}},
		Body:   view.ByteSlice(),
	}
}

// ErrorResponse returns the error response the protocol sends for code c:
// status c.Status(), a plain-text body msg plus a newline, and the
// X-Geecache-Error header. Bindings use it for the errors only they can
// find (a request body that does not decode, a value over a payload limit
// of their transport), so that those look like any other protocol error.
func ErrorResponse(c Code, msg string) Response {
	return Response{
		Status: c.Status(),
		Header: http.Header{
			"Content-Type":           {"text/plain; charset=utf-8"},
			"X-Content-Type-Options": {"nosniff"},
			HeaderError:              {string(c)},
		},
		Body: []byte(msg + "\n"),
	}
}
