//go:build js && wasm

package wasmjs

import (
	"context"
	"strings"
	"syscall/js"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A node served from JavaScript answers browsers as a net/http node does
// (nethttp's CORS tests): the preflight of an allowed origin, the CORS
// headers on its answers (refusals included, so that a page can read
// why), none for another origin; and the base path is cut off first.
func TestServeCORSAndBasePath(t *testing.T) {
	const app = "https://app.example"
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<20, getter.Map(map[string]string{"Tom": "630"}), nil); err != nil {
		t.Fatal(err)
	}
	pool, err := nethttp.NewPool(self, reg, &nethttp.PoolOptions{AllowOrigins: []string{app}, Cluster: nethttp.Cluster{BasePath: "/cache"}})
	if err != nil {
		t.Fatal(err)
	}
	f := Func(pool)
	defer f.Release()
	hdr := func(kv ...string) js.Value {
		o := js.Global().Get("Object").New()
		for i := 0; i < len(kv); i += 2 {
			o.Set(kv[i], kv[i+1])
		}
		return o
	}
	const path = "/cache/_geecache/scores/Tom"

	r := call(t, f, "OPTIONS", path, hdr("origin", app, "access-control-request-method", "GET"))
	if r.status != 204 || r.header["Access-Control-Allow-Origin"] != app || r.header["Access-Control-Allow-Methods"] != "GET" ||
		r.header["Vary"] != "Origin" || r.body != "" {
		t.Errorf("preflight: %d %v %q; want 204 with the CORS headers for %s", r.status, r.header, r.body, app)
	}

	r = call(t, f, "GET", path, hdr("origin", app))
	if r.status != 200 || r.body != "630" || r.header["Access-Control-Allow-Origin"] != app ||
		!strings.Contains(r.header["Access-Control-Expose-Headers"], "X-Geecache-Checksum") {
		t.Errorf("GET from %s: %d %v %q; want 630 with Allow-Origin and Expose-Headers", app, r.status, r.header, r.body)
	}

	r = call(t, f, "GET", path, hdr("origin", "https://other.example"))
	if _, ok := r.header["Access-Control-Allow-Origin"]; r.status != 200 || ok || r.header["Vary"] != "Origin" {
		t.Errorf("GET from another origin: %d %v; want 200 without Allow-Origin, Vary: Origin", r.status, r.header)
	}

	// Refusals: a write without a secret, and a path outside the base path.
	r = call(t, f, "DELETE", path, hdr("origin", app, "x-geecache-peer", "1"))
	if r.status != 401 || r.header["Access-Control-Allow-Origin"] != app || r.header["X-Geecache-Error"] == "" {
		t.Errorf("unsigned DELETE from %s: %d %v; want 401 with the CORS headers", app, r.status, r.header)
	}
	r = call(t, f, "GET", "/_geecache/scores/Tom", hdr("origin", app))
	if r.status != 400 || r.header["Access-Control-Allow-Origin"] != app || !strings.Contains(r.body, "base path") {
		t.Errorf("GET outside the base path: %d %v %q; want 400 with the CORS headers", r.status, r.header, r.body)
	}
	if v, err := reg.Lookup("scores").Get(context.Background(), "Tom"); err != nil || v.String() != "630" {
		t.Errorf("after the refused DELETE: %q, %v; want 630 still", v.String(), err)
	}
}
