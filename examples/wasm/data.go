// Command wasm is a GeeCache node compiled to WebAssembly (GOOS=js
// GOARCH=wasm) and run by node.js: shim.js listens with node's http
// module and hands each peer request to the function the node exports
// (package adapters/wasmjs), and the node reaches its peers through the
// host's fetch() (package adapters/nethttp). It joins a cluster with nodes
// served by net/http; see README.md.
package main

import (
	"fmt"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/examples/internal/seeddb"
)

// groupName and cacheBytes are the group every node of the example has; the
// cache holds the whole data set, so nothing is evicted.
const (
	groupName  = "scores"
	cacheBytes = 1 << 20
)

// numKeys is how many generated keys the data set has besides the seed's
// three scores: enough that every node of a three-node cluster owns some.
const numKeys = 300

// dataset is the slow database's content, the same on every node: the
// seed's scores (Tom 630, Jack 589, Sam 567) and key-000 ... key-299.
func dataset() map[string]string {
	d := seeddb.Scores()
	for i := range numKeys {
		d[genKey(i)] = fmt.Sprint(i * 7)
	}
	return d
}

// genKey is the i-th generated key.
func genKey(i int) string { return fmt.Sprintf("key-%03d", i) }

// statsReport is what the wasm node's stats() (and the shim's /stats)
// answers, as JSON.
type statsReport struct {
	Self    string
	Stats   cache.Stats
	Lookups map[string]int // the slow database's lookups, per key looked up
}
