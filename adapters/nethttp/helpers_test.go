package nethttp

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/cache"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leakOptions()...) }

func mustClient(t testing.TB, addr string, o *ClientOptions) *Client {
	t.Helper()
	c, err := NewClient(addr, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

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
