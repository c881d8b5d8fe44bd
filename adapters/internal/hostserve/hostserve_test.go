package hostserve_test

import (
	"context"
	"testing"

	"github.com/geecache/geecache/adapters/internal/hostserve"
	"github.com/geecache/geecache/adapters/internal/protocol"
)

type answer int

func (a answer) Serve(context.Context, string, string, protocol.Header, []byte) protocol.Response {
	return protocol.Response{Status: int(a)}
}

// node embeds a Server under an unexported name, as nethttp.Pool does.
type node struct {
	server
	name string
}

type server = hostserve.Server

// Of finds the Handler of a type that embeds a Server, and only of such a
// type.
func TestOf(t *testing.T) {
	n := &node{server: hostserve.NewServer(answer(204)), name: "a"}
	h, ok := hostserve.Of(n)
	if !ok {
		t.Fatal("Of(a node embedding a Server) = false")
	}
	if r := h.Serve(context.Background(), "GET", "/", nil, nil); r.Status != 204 {
		t.Errorf("its Handler answered %d; want 204", r.Status)
	}
	if _, ok := hostserve.Of(answer(200)); ok {
		t.Error("Of(a bare Handler) = true; want false")
	}
	if _, ok := hostserve.Of(&node{}); ok {
		t.Error("Of(a node whose Server holds no Handler) = true; want false")
	}
	if _, ok := hostserve.Of(nil); ok {
		t.Error("Of(nil) = true")
	}
}
