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

// The cost of the crossing itself, in process (no host's HTTP server):
// a peer's GET of a cached value, one per call and 16 in a batch, with
// the headers a Fetch host hands over (lower case) and node's rawHeaders.
// Run under node with
//
//	PATH="$PATH:$(go env GOROOT)/lib/wasm" GOOS=js GOARCH=wasm go test -run '^$' -bench Serve -benchmem ./adapters/wasmjs/
func BenchmarkServe(b *testing.B) {
	reg := cache.NewRegistry()
	g, err := reg.NewGroup("scores", 1<<20, getter.Map(map[string]string{"Tom": "630"}), nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := g.Get(context.Background(), "Tom"); err != nil {
		b.Fatal(err)
	}
	pool, err := nethttp.NewPool(self, reg, nil)
	if err != nil {
		b.Fatal(err)
	}
	f := Func(pool)
	defer f.Release()
	const path = "/_geecache/scores/Tom"
	headers := map[string]string{
		"fetch": "host\n127.0.0.1:8001\nuser-agent\nGo-http-client/1.1\nx-geecache-peer\n1\naccept-encoding\ngzip",
		"node":  "Host\n127.0.0.1:8001\nUser-Agent\nGo-http-client/1.1\nX-Geecache-Peer\n1\nAccept-Encoding\ngzip",
	}
	for _, name := range []string{"fetch", "node"} {
		h := headers[name]
		b.Run(name+"/one", func(b *testing.B) {
			for b.Loop() {
				if r := f.Invoke("GET", path, h); r.Get("status").Int() != 200 {
					b.Fatalf("status %d", r.Get("status").Int())
				}
			}
		})
		batch := strings.Repeat("GET\n"+path+"\n"+h+"\x00", 15) + "GET\n" + path + "\n" + h
		b.Run(name+"/batch16", func(b *testing.B) {
			for b.Loop() {
				if r := f.Invoke(batch, js.Undefined()); r.Length() != 16 || r.Index(15).Get("status").Int() != 200 {
					b.Fatalf("answers: %d", r.Length())
				}
			}
		})
	}
}
