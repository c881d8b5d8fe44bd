//go:build !js

package nethttp_test

import (
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
)

// tagging adds a header to each request it is given, in place, as many
// RoundTrippers that users write do, and checks that the header is still
// the one it set when the request leaves.
type tagging struct {
	t  *testing.T
	rt http.RoundTripper
}

func (tg *tagging) RoundTrip(r *http.Request) (*http.Response, error) {
	tag := r.URL.Path
	r.Header.Set("X-Tag", tag)
	runtime.Gosched()
	if got := r.Header.Get("X-Tag"); got != tag {
		tg.t.Errorf("request %s left with X-Tag %q: its header is shared with another request", tag, got)
	}
	return tg.rt.RoundTrip(r)
}

// Every request a node sends has a header of its own, so that a user's
// Transport may add to it, also when there is nothing to sign.
func TestUserTransportMayAddHeaders(t *testing.T) {
	rt := &tagging{t: t, rt: nethttp.NewTransport()}
	t.Cleanup(func() { rt.rt.(*http.Transport).CloseIdleConnections() })
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{PoolOptions: nethttp.PoolOptions{Transport: rt}})
	var keys []string
	for i := 0; len(keys) < 32 && i < 10_000; i++ {
		if k := fmt.Sprint("key-", i); nodes[0].Owner(k) == nodes[1] {
			keys = append(keys, k)
		}
	}
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			if v, err := nodes[0].Group.Get(t.Context(), k); err != nil || v.String() != "v:"+k {
				t.Errorf("Get(%q) = %q, %v; want %q", k, v, err, "v:"+k)
			}
		})
	}
	wg.Wait()
}
