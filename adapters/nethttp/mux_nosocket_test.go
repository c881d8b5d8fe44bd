//go:build js || wasip1

package nethttp

import (
	"errors"
	"net/http"
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

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
