//go:build wasip1

package nethttp

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/geecache/geecache/cache"
)

// TestMultiplexNeedsSockets: where no socket can be opened, a Pool with
// Multiplex fails at once with ErrConfig (even with a Transport the host
// provides), rather than failing every request later.
func TestMultiplexNeedsSockets(t *testing.T) {
	rt := http.RoundTripper(roundTripperFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("unused") }))
	if _, err := NewPool("", cache.NewRegistry(), &PoolOptions{Multiplex: true, Transport: rt}); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("NewPool with Multiplex: %v; want ErrConfig", err)
	}
	if _, err := NewPool("", cache.NewRegistry(), &PoolOptions{Transport: rt}); err != nil {
		t.Fatalf("NewPool without Multiplex: %v", err)
	}
}

// TestMultiplexUpgradeServedPlainWithoutSockets: where the carriage is
// left out of the build, a Pool never takes a connection over for it,
// even from a ResponseWriter that could hand one over (a net/http server
// on an in-process listener): an upgrade is answered as a plain request,
// so the asking peer goes on over HTTP/1.1.
func TestMultiplexUpgradeServedPlainWithoutSockets(t *testing.T) {
	rt := http.RoundTripper(roundTripperFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("unused") }))
	p := newTestPool(t, &PoolOptions{Transport: rt})
	req := httptest.NewRequest(http.MethodGet, "/_geecache/mux", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "geecache-mux")
	w := &hijackRecorder{ResponseRecorder: httptest.NewRecorder()}
	p.ServeHTTP(w, req)
	if w.hijacked {
		t.Fatal("the Pool took the connection over for the multiplexed carriage")
	}
	if w.Code == http.StatusSwitchingProtocols || w.Code < 400 {
		t.Fatalf("upgrade answered %d; want the handler's refusal of a request that names no key", w.Code)
	}
}

// A hijackRecorder is a ResponseRecorder that hands a connection over,
// as a net/http server's ResponseWriter does: one whose other end is
// closed at once.
type hijackRecorder struct {
	*httptest.ResponseRecorder
	hijacked bool
}

func (w *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.hijacked = true
	c, peer := net.Pipe()
	_ = peer.Close()
	return c, bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c)), nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
