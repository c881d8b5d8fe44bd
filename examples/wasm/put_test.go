//go:build !js && !wasip1

package main

import (
	"context"
	"testing"
	"time"
)

// A net/http node's Group.Set of a key the wasm node owns reaches the
// wasm node as a signed PUT through shim.js: the wasm node then answers
// the new value without a lookup in its database, and a key it never had
// still comes from its database.
func TestWasmNodeTakesPut(t *testing.T) {
	node := nodeJS(t)
	wasm, wasmExec := buildWasm(t)
	const secret = "put secret"
	a := startNative(t, secret, 0)
	w := startWasmNode(t, node, wasm, wasmExec, secret, "-peers="+a.url)
	a.pool.Set(a.url, w.url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var key, other string // two keys the wasm node owns
	for i := range numKeys {
		if k := genKey(i); a.pool.Owner(k) == w.url {
			if key == "" {
				key = k
			} else if other == "" {
				other = k
			}
		}
	}
	if other == "" {
		t.Fatal("the wasm node owns fewer than two generated keys")
	}
	if err := a.group.Set(ctx, key, []byte("set by a peer"), 0); err != nil {
		t.Fatalf("Set(%s) through the wasm node: %v", key, err)
	}
	if st, body, err := w.get(ctx, key); err != nil || st != 200 || body != "set by a peer" {
		t.Fatalf("wasm node: %s = %d %q, %v; want 200 %q", key, st, body, err, "set by a peer")
	}
	if st, body, err := w.get(ctx, other); err != nil || st != 200 || body != dataset()[other] {
		t.Fatalf("wasm node: %s = %d %q, %v; want 200 %q", other, st, body, err, dataset()[other])
	}
	if st, body, err := w.get(ctx, "kkk"); err != nil || st != 404 || body != "kkk not exist" {
		t.Fatalf("wasm node: kkk = %d %q, %v; want 404", st, body, err)
	}
	ws, err := w.stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Lookups[key] != 0 || ws.Lookups[other] != 1 {
		t.Errorf("wasm node's database lookups: %s %d (want 0: it was Set), %s %d (want 1)", key, ws.Lookups[key], other, ws.Lookups[other])
	}
}
