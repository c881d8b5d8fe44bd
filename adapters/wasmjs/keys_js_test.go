//go:build js && wasm

package wasmjs

import (
	"context"
	"errors"
	"github.com/geecache/geecache/internal/peertest"
	"math/rand/v2"
	"strconv"
	"syscall/js"
	"testing"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/keytest"
)

// Every key, "." and ".." included, goes from a nethttp.Client under js
// (fetch(), whose WHATWG URL parser resolves the older "%2E" and "%2E%2E"
// away) through node.js's http module to Func and back as itself, signed
// and with a group named "." too; a key the source lacks is "not found".
func TestKeysRoundTripBehindNodeHTTP(t *testing.T) {
	reg := cache.NewRegistry()
	echo := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if key == "missing" {
			return nil, getter.ErrNotFound
		}
		return []byte("v=" + key), nil
	})
	for _, g := range []string{"scores", "."} {
		if _, err := reg.NewGroup(g, 1<<20, echo, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The server signs for its own address, known once node.js listens:
	// node.js calls holder.serve, set before any request.
	holder := js.Global().Get("Object").New()
	delegate := js.Global().Get("Function").New("h", "return (...a) => h.serve(...a);").Invoke(holder)
	v, err := await(t, js.Global().Get("Function").New("serve", nodeServer).Invoke(delegate))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Call("close")
	base := "http://127.0.0.1:" + strconv.Itoa(v.Get("port").Int())
	srv, err := nethttp.NewPool(base, reg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f := Func(srv)
	defer f.Release()
	holder.Set("serve", f)
	c, err := nethttp.NewClient(base, &nethttp.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for i, key := range keytest.Keys(rand.New(rand.NewPCG(15, 4)), 200) {
		for _, g := range []string{"scores", "."} {
			got, _, err := peertest.Get(context.Background(), c, g, key)
			if err != nil || string(got) != "v="+key {
				t.Fatalf("group %q, key #%d %q (path %q): %q, %v", g, i, key, protocol.Path(g, key), got, err)
			}
		}
	}
	if _, _, err := peertest.Get(context.Background(), c, "scores", "missing"); !errors.Is(err, getter.ErrNotFound) {
		t.Errorf("missing key: %v; want getter.ErrNotFound", err)
	}
}
