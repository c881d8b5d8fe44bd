package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/ratelog"
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
	Header Header
	// Body is the body of a PUT (the value to store); other requests have
	// none.
	Body []byte
}

// A Response is what a Server answers; a binding sends Status, Header and
// the body (see Len, WriteTo and Reader) as they are.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header holds Content-Type, and X-Geecache-Error (and Allow for 405)
	// on errors. Content-Length is left to the binding. Its values may be
	// shared with the Server: a binding may replace them, never modify
	// them in place.
	Header Header
	// Body is the body of a response that has no Value: a plain-text
	// message on errors, nothing on the 200 to a PUT or DELETE. The
	// Server does not keep it, so a binding may use it freely.
	Body []byte
	// Value is the body of the 200 to a GET: the cached value itself,
	// shared with the cache, not a copy. A binding sends it with WriteTo
	// (or Reader), which hands the cached bytes to the writer without
	// copying them.
	Value cache.ByteView
}

// Code returns the response's error code, or "" for a 200.
func (r Response) Code() Code { return Code(Field(r.Header, HeaderError)) }

// Len returns the length of the response's body: Value's if it has one,
// else Body's.
func (r Response) Len() int {
	if r.Value.Len() > 0 {
		return r.Value.Len()
	}
	return len(r.Body)
}

// WriteTo writes the response's body to w (Value, without copying it, or
// Body) in one call of w.Write. It implements io.WriterTo.
func (r Response) WriteTo(w io.Writer) (int64, error) {
	if r.Value.Len() > 0 {
		return r.Value.WriteTo(w)
	}
	n, err := w.Write(r.Body)
	return int64(n), err
}

// Reader returns a reader of the response's body that does not copy it.
func (r Response) Reader() io.Reader {
	if r.Value.Len() > 0 {
		return r.Value.Reader()
	}
	return bytes.NewReader(r.Body)
}

// A Server answers protocol requests for the groups of a registry. It does
// no I/O of its own, so every binding shares it. It is safe for concurrent
// use.
type Server struct {
	reg     *cache.Registry
	cfg     ServerOptions    // with the defaults filled in
	warn    *ratelog.Limiter // a line a second at most of each kind of warning
	digests sync.Pool        // of *digest, to checksum values in place
	octets  []string         // the Content-Type of a value, shared by all answers (never modified)
	macs    *macs            // the secret's; nil without one
}

// NewServer returns a Server for the groups of reg, configured by opts (nil
// for the defaults). It fails, with an error wrapping cache.ErrConfig, for a nil
// reg or options that cannot work.
func NewServer(reg *cache.Registry, opts *ServerOptions) (*Server, error) {
	if reg == nil {
		return nil, fmt.Errorf("geecache: %w: nil registry", cache.ErrConfig)
	}
	c, err := newServerConfig(opts)
	if err != nil {
		return nil, err
	}
	s := &Server{reg: reg, cfg: c, warn: ratelog.New(c.Logger, time.Second, nil),
		digests: sync.Pool{New: func() any { return new(digest) }},
		octets:  []string{"application/octet-stream"}}
	if c.Secret != nil {
		s.macs = newMACs(c.Secret)
	}
	return s, nil
}

// MaxValueBytes returns the largest value the Server sends.
func (s *Server) MaxValueBytes() int64 { return s.cfg.MaxValueBytes }

// AllowedMethods is the Allow header of a 405: the methods of the protocol.
const AllowedMethods = "GET, PUT, DELETE, POST"

// Serve answers req. It checks, in order: the method (405), the signature
// when a secret is set (401, before anything is parsed or loaded), the path
// (400), the group (404 unknown_group); then it answers a peer request
// (one carrying HeaderPeer) through cache.Registry.ServePeer, with the
// value's remaining lifetime in HeaderTTL, or a user's GET with Group.Get,
// and answers 200 with the value, 404 not_found, 500 load_error, or 413
// too_large for a value over the size limit. A peer's DELETE and PUT are
// an OpRemove and an OpSet of the key. ctx is passed to the load; it
// should end when the caller goes away.
//
// An error body says what went wrong in the owner's words (for a missing
// key, the Getter's message), without repeating the group and key the
// caller asked for; with HideErrors, an untrusted caller gets a generic one
// instead (see ServerOptions.HideErrors).
//
// Every answer is sealed (see Seal): it carries the checksum of its body
// and, with a secret, its signature.
func (s *Server) Serve(ctx context.Context, req Request) Response {
	return s.Seal(req, s.serve(ctx, req, nil, nil))
}

// ServeInto is Serve with the answer's header fields put into h, which
// becomes the Response's Header, instead of a new map: a binding passes
// its own (an http.ResponseWriter's Header) and saves making one and
// copying it. Fields of h that the answer does not set are left as they
// are. loading, if not nil, is called when the group begins (or joins) a
// load for a peer's request (cache.PeerReply.Loading): a binding that can
// send an interim answer tells the asking node so, and keeps telling it
// while the answer is pending.
func (s *Server) ServeInto(ctx context.Context, req Request, h Header, loading Listener) Response {
	r := s.serve(ctx, req, h, loading)
	for k, v := range r.Header { // an answer with a header of its own (an error); no-op when it is h
		h[k] = v
	}
	r.Header = h
	return s.Seal(req, r)
}

// Seal returns r, the answer to req, with the checksum of its body
// (HeaderChecksum) and, with a secret, the response signature bound to
// req's signature, r's status and code, and that checksum
// (HeaderSignature), as protocol version 2 requires of every response.
// Serve seals its answers; a binding seals the errors only it finds (see
// ErrorResponse), or a version 2 client takes them for a broken peer. r's
// header is modified.
func (s *Server) Seal(req Request, r Response) Response { return s.seal(req, r) }

// Admit checks what a request's method and headers allow, before anything
// else is read: the method, the signature when a secret is set, and for a
// write (PUT, DELETE) that it is a peer request the node accepts. If it
// returns false, the sealed Response is the answer to send. A binding
// whose transport streams the body calls it before reading a PUT's body,
// so that an unauthorised caller cannot make the node read one; Serve
// calls it too.
func (s *Server) Admit(ctx context.Context, req Request) (Response, bool) {
	if r, ok := s.admit(ctx, req); !ok {
		return s.Seal(req, r), false
	}
	return Response{}, true
}

func (s *Server) admit(ctx context.Context, req Request) (Response, bool) {
	switch req.Method {
	case methodGet, methodPut, methodDelete, methodPost:
	default:
		r := ErrorResponse(CodeMethodNotAllowed, "method "+clip(req.Method)+" not allowed, use GET (or, between peers, PUT, DELETE and POST)")
		r.Header.Set("Allow", AllowedMethods)
		return r, false
	}
	if s.cfg.Secret != nil {
		if err := verify(req.Header, s.macs, time.Now(), s.cfg.MaxSkew, req.Method, s.cfg.Self, req.Path); err != nil {
			s.warn.Log(ctx, slog.LevelWarn, "unauthorized", "geecache: rejected unauthenticated request",
				slog.String("path", clip(req.Path)), slog.String("reason", err.Error()))
			return ErrorResponse(CodeUnauthorized, "unauthorized: "+err.Error()), false
		}
	}
	if req.Method != methodGet {
		if Field(req.Header, HeaderPeer) == "" {
			return ErrorResponse(CodeBadRequest, req.Method+" is a peer request (it needs "+HeaderPeer+")"), false
		}
		if _, op, _ := batchOp(req.Path); req.Method == methodPost && (op == BatchGet || op == BatchOffer) {
			// A batch of reads, or an offer, which makes the node read
			// (from its own peers' memory) and nothing else: as open as a
			// GET.
			return Response{}, true
		}
		if s.cfg.Secret == nil && !s.cfg.UnsignedWrites {
			return ErrorResponse(CodeUnauthorized, "unauthorized: this node takes writes only when signed (a secret), or with UnsignedWrites"), false
		}
	}
	return Response{}, true
}

// serve answers req; a value's header fields go into h, or a new map if h
// is nil.
func (s *Server) serve(ctx context.Context, req Request, h Header, loading Listener) Response {
	if r, ok := s.admit(ctx, req); !ok {
		return r
	}
	if s.cfg.Propagator != nil {
		ctx = s.cfg.Propagator.Extract(ctx, req.Header)
	}
	if req.Method == methodPost {
		return s.batch(ctx, req, loading)
	}
	groupName, key, err := ParsePath(req.Path)
	if err != nil {
		return ErrorResponse(CodeBadRequest, err.Error())
	}
	g := s.reg.Lookup(groupName)
	if g == nil {
		return ErrorResponse(CodeUnknownGroup, "no such group: "+clip(groupName))
	}
	if req.Method != methodGet {
		return s.write(ctx, req, g, key)
	}
	peer := Field(req.Header, HeaderPeer)
	trusted := s.cfg.Secret != nil // only a signed request shows who sent it
	var view cache.ByteView
	var ttl time.Duration
	if peer != "" {
		op := cache.OpGet
		if peer == PeerMemoryOnly {
			op = cache.OpPeek
		}
		a := &oneAnswer{loading: loading}
		a.keys[0] = key
		if err := s.reg.ServePeer(ctx, cache.PeerRequest{Op: op, Group: groupName, Keys: a.keys[:]}, a); err != nil {
			return s.peerError(err)
		}
		view, ttl, err = a.v, a.ttl, a.err
	} else {
		view, err = g.Get(ctx, key)
	}
	if err != nil {
		r := s.loadError(ctx, err, trusted, groupName, key)
		if ttl > 0 && r.Code() == CodeNotFound {
			r.Header.Set(HeaderTTL, FormatTTL(ttl))
		}
		return r
	}
	if n := int64(view.Len()); n > s.cfg.MaxValueBytes {
		s.warn.Log(ctx, slog.LevelWarn, "too large", "geecache: value over size limit",
			slog.String("group", clip(groupName)), slog.String("key", clip(key)), slog.Int64("bytes", n), slog.Int64("limit", s.cfg.MaxValueBytes))
		return ErrorResponse(CodeTooLarge, fmt.Sprintf("value of %d bytes exceeds the limit of %d bytes", n, s.cfg.MaxValueBytes))
	}
	if h == nil {
		h = make(Header, 3)
	}
	h["Content-Type"] = s.octets
	if ttl > 0 {
		h[HeaderTTL] = []string{FormatTTL(ttl)}
	}
	return Response{Status: statusOK, Header: h, Value: view}
}

// loadError answers a failed load: 404 not_found or 500 load_error, with
// the cause as the message, or a generic one for an untrusted caller when
// errors are hidden.
func (s *Server) loadError(ctx context.Context, err error, trusted bool, group, key string) Response {
	code, generic := CodeLoadError, "load failed"
	switch {
	case errors.Is(err, getter.ErrNotFound):
		code, generic = CodeNotFound, getter.ErrNotFound.Error()
	case errors.Is(err, cache.ErrNotHeld):
		code, generic = CodeNotHeld, cache.ErrNotHeld.Error()
	}
	msg := err.Error()
	var ce *cache.Error
	if errors.As(err, &ce) {
		msg = ce.Err.Error() // the caller knows the group and key it asked for
	}
	if code == CodeLoadError {
		// The cause alone: the group and key are attributes of their own,
		// cut (a cache.Error repeats them whole).
		s.warn.Log(ctx, slog.LevelWarn, "load failed", "geecache: load failed",
			slog.String("group", clip(group)), slog.String("key", clip(key)), slog.String("err", cutLog(msg)))
	}
	if s.cfg.HideErrors && !trusted {
		return ErrorResponse(code, generic)
	}
	return ErrorResponse(code, msg)
}

// ErrorResponse returns the error response the protocol sends for code c:
// status c.Status(), a plain-text body msg plus a newline, and the
// X-Geecache-Error header. msg is cut to keep the body within the 4 KiB a
// client reads. Bindings use it, then Server.Seal, for the errors only they
// can find (a request body that does not decode, a value over a payload
// limit of their transport), so that those look like any other protocol
// error.
func ErrorResponse(c Code, msg string) Response {
	if len(msg) >= maxErrorBody {
		msg = strings.ToValidUTF8(msg[:maxErrorBody-len("…")-1], "") + "…"
	}
	return Response{
		Status: c.Status(),
		Header: Header{
			"Content-Type":           {"text/plain; charset=utf-8"},
			"X-Content-Type-Options": {"nosniff"},
			HeaderError:              {string(c)},
		},
		Body: []byte(msg + "\n"),
	}
}

// oneAnswer is the cache.PeerReply of a peer's request of one key.
type oneAnswer struct {
	keys    [1]string // the request's, in the same allocation
	v       cache.ByteView
	ttl     time.Duration
	err     error
	loading Listener
}

func (a *oneAnswer) Answer(_ int, v cache.ByteView, ttl time.Duration, err error) {
	a.v, a.ttl, a.err = v, ttl, err
}

func (a *oneAnswer) Loading() {
	if a.loading != nil {
		a.loading.Loading()
	}
}

// noAnswers is the cache.PeerReply of a write, which has none.
type noAnswers struct{}

func (noAnswers) Answer(int, cache.ByteView, time.Duration, error) {}
func (noAnswers) Loading()                                         {}

// peerError answers a request cache.Registry.ServePeer refused as a whole.
func (s *Server) peerError(err error) Response {
	switch {
	case errors.Is(err, cache.ErrUnknownGroup):
		return ErrorResponse(CodeUnknownGroup, err.Error())
	default:
		return ErrorResponse(CodeBadRequest, err.Error())
	}
}
