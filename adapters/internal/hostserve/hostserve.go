// Package hostserve joins the two halves of a node that a JavaScript host
// serves: package adapters/wasmjs, which takes the host's requests, and
// the node's nethttp.Pool, which answers them. Under GOOS=js a Pool has no
// net/http to answer with (no http.Handler: net/http is not linked there,
// see protocol.Header), so it hands wasmjs its Handler through a method
// no package outside this one can call: a Pool embeds a Server, and Of
// finds it. An application never meets this package; it passes its Pool
// to wasmjs.Func.
package hostserve

import (
	"context"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// A Handler answers one protocol request that a host received and read
// whole: its method, its path as sent (escaped, relative to where the node
// is mounted, so starting with the base path if there is one), its header
// fields and its body (nil for none). The request's load is abandoned when
// ctx ends.
type Handler interface {
	Serve(ctx context.Context, method, escapedPath string, header protocol.Header, body []byte) protocol.Response
}

// A Server holds a node's Handler for Of. It is embedded in the type that
// serves (under an unexported name, so that it adds nothing to that type's
// exported surface).
type Server struct{ h Handler }

// NewServer returns the Server that gives h to Of.
func NewServer(h Handler) Server { return Server{h: h} }

// hostHandler is what Of looks for.
func (s Server) hostHandler() Handler { return s.h }

// Of returns the Handler of v, a value whose type embeds a Server, or
// false if v has none.
func Of(v any) (Handler, bool) {
	s, ok := v.(interface{ hostHandler() Handler })
	if !ok {
		return nil, false
	}
	h := s.hostHandler()
	return h, h != nil
}
