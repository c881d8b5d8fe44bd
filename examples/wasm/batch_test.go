//go:build !js && !wasip1

package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
)

// A native node asks the wasm node (in node.js, behind shim.js) for the
// keys it owns in one batch, signed: every value comes from the wasm
// node, loaded there once, with no fallback; then a signed Purge empties
// the wasm node and RemoveMany reaches it.
func TestBatchToWasmNode(t *testing.T) {
	node := nodeJS(t)
	wasm, wasmExec := buildWasm(t)
	const secret = "batch secret"
	a := startNative(t, secret, 0)
	w := startWasmNode(t, node, wasm, wasmExec, secret, "-peers="+a.url)
	a.pool.Set(a.url, w.url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data := dataset()
	var keys []string
	for _, k := range keysRange(0, 100) {
		if a.pool.Owner(k) == w.url {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		t.Fatal("the wasm node owns none of the keys")
	}
	for i := range 1000 { // a missing key the wasm node owns too
		if k := fmt.Sprint("missing-", i); a.pool.Owner(k) == w.url {
			keys = append(keys, k)
			break
		}
	}
	if _, ok := data[keys[len(keys)-1]]; ok {
		t.Fatal("no missing key of the first 1000 is the wasm node's")
	}
	a.group.GetMany(ctx, keys, func(i int, v cache.ByteView, err error) {
		want, ok := data[keys[i]]
		if !ok {
			if err == nil {
				t.Errorf("%s: %q; want an error", keys[i], v)
			}
			return
		}
		if err != nil || v.String() != want {
			t.Errorf("%s: %q, %v; want %q", keys[i], v, err, want)
		}
	})
	if s := a.group.Stats(); s.FallbackLoads != 0 || s.PeerErrors != 0 || s.LocalLoads != 0 {
		t.Fatalf("the native node loaded for itself: %+v", s)
	}
	ws, err := w.stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[:len(keys)-1] {
		if ws.Lookups[k] != 1 {
			t.Errorf("the wasm node looked %s up %d times; want 1", k, ws.Lookups[k])
		}
	}
	if err := a.group.RemoveMany(ctx, keys); err != nil {
		t.Fatalf("RemoveMany: %v", err)
	}
	if err := a.group.Purge(ctx); err != nil {
		t.Fatalf("Purge: %v", err)
	}
}
