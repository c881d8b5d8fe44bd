// Command wasm is a GeeCache node compiled to WebAssembly (GOOS=js
// GOARCH=wasm) and run by a JavaScript host: shim.js in node.js, fetch.mjs
// in Deno or Bun, examples/workers in workerd. The host listens and hands
// each peer request to the function the node exports (package
// adapters/wasmjs), and the node reaches its peers through the host's
// fetch() (package adapters/nethttp). It joins a cluster with nodes served
// by net/http; see README.md.
package main

import (
	"context"
	"fmt"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// groupName and cacheBytes are the group every node of the example has; the
// cache holds the whole data set, so nothing is evicted. echoGroup is a
// second group, for the tests that send every awkward key through each
// host (see echoLoad).
const (
	groupName  = "scores"
	echoGroup  = "echo"
	cacheBytes = 1 << 20
)

// numKeys is how many generated keys the data set has besides the
// tutorial's scores: enough that every node of a three-node cluster owns
// some.
const numKeys = 300

// dataset is the slow database's content, the same on every node: the
// tutorial's scores (Tom 630, Jack 589, Sam 567, with Ben 582 and Leo 604)
// and key-000 ... key-299.
func dataset() map[string]string {
	d := map[string]string{"Tom": "630", "Jack": "589", "Sam": "567", "Ben": "582", "Leo": "604"}
	for i := range numKeys {
		d[genKey(i)] = fmt.Sprint(i * 7)
	}
	return d
}

// genKey is the i-th generated key.
func genKey(i int) string { return fmt.Sprintf("key-%03d", i) }

// echoMissing is the one key the group echo does not have.
const echoMissing = "missing"

// echoLoad is the source of the group echo (as getter.Func(echoLoad)): the
// value of a key is "v=" and the key, and echoMissing is not found.
func echoLoad(_ context.Context, key string) ([]byte, error) {
	if key == echoMissing {
		return nil, getter.ErrNotFound
	}
	return []byte("v=" + key), nil
}

// statsReport is what the wasm node's stats() (and the shim's /stats)
// answers, as JSON.
type statsReport struct {
	Self    string
	Stats   cache.Stats
	Lookups map[string]int // the slow database's lookups, per key looked up
}
