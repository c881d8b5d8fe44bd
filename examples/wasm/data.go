// Command wasm is a GeeCache node compiled to WebAssembly (GOOS=js
// GOARCH=wasm) and run by a JavaScript host: shim.js in node.js, fetch.mjs
// in Deno or Bun, examples/workers in workerd. The host listens and hands
// each peer request to the function the node exports (package
// adapters/wasmjs), and the node reaches its peers through the host's
// fetch() (package adapters/nethttp). It joins a cluster with nodes served
// by net/http; see README.md.
package main

import (
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/examples/internal/wasmdata"
)

// groupName and cacheBytes are the group every node of the example has; the
// cache holds the whole data set, so nothing is evicted. echoGroup is a
// second group, for the tests that send every awkward key through each
// host (package wasmdata).
const (
	groupName  = wasmdata.Scores
	echoGroup  = wasmdata.Echo
	cacheBytes = wasmdata.CacheBytes
)

// dataset is the slow database's content, the same on every node.
func dataset() map[string]string { return wasmdata.Dataset() }

// statsReport is what the wasm node's stats() (and the shim's /stats)
// answers, as JSON.
type statsReport struct {
	Self    string
	Stats   cache.Stats
	Lookups map[string]int // the slow database's lookups, per key looked up
}
