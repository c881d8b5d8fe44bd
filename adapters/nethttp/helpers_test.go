//go:build !js

package nethttp

import (
	"log/slog"
	"testing"

	"github.com/geecache/geecache/cache"
)

func mustHandler(t testing.TB, reg *cache.Registry, o *handlerOptions) *handler {
	t.Helper()
	if o == nil {
		o = &handlerOptions{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := newHandler(reg, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustSet(t testing.TB, p *Pool, addrs ...string) {
	t.Helper()
	if err := p.Set(addrs...); err != nil {
		t.Fatal(err)
	}
}
