//go:build js && wasm

package wasmjs_test

import (
	"fmt"
	"syscall/js"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/wasmjs"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A JavaScript host gets the function as globalThis.geecacheServe and
// calls it for each protocol request; here the host's side is simulated
// by printing the answer when the Promise resolves.
func Example() {
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<20, getter.Map(map[string]string{"Tom": "630"}), nil); err != nil {
		fmt.Println(err)
		return
	}
	pool, err := nethttp.NewPool("http://10.0.0.1:8001", reg, nil) // the node's address, as its peers reach it
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	serve := wasmjs.Func(pool)
	defer serve.Release()
	js.Global().Set("geecacheServe", serve)
	defer js.Global().Delete("geecacheServe")

	// A callback from JavaScript must not block (not even on printing),
	// so it hands the response over.
	done := make(chan js.Value, 1)
	then := js.FuncOf(func(_ js.Value, args []js.Value) any {
		done <- args[0]
		return nil
	})
	defer then.Release()
	// In JavaScript: await geecacheServe("GET", "/_geecache/scores/Tom", {})
	// (the answer, or a Promise of it when it has to wait).
	r0 := js.Global().Call("geecacheServe", "GET", "/_geecache/scores/Tom", map[string]any{})
	js.Global().Get("Promise").Call("resolve", r0).Call("then", then)
	r := <-done
	// The body is a string when it is valid UTF-8 (a host sends it as
	// UTF-8: the same bytes), else a Uint8Array.
	fmt.Println(r.Get("status").Int(), r.Get("body").String())
	// Output: 200 630
}
