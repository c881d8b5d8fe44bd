// Package wasmdata is the data every node of the WebAssembly examples
// (examples/wasm, examples/workers) and of their tests has: the group
// "scores" over the tutorial's scores and generated keys, and the group
// "echo" that answers any key, for the tests that send every awkward key
// through each JavaScript host.
package wasmdata

import (
	"context"
	"fmt"

	"github.com/geecache/geecache/examples/internal/seeddb"
	"github.com/geecache/geecache/getter"
)

// Group names and the cache size of each group (it holds the whole data
// set, so nothing is evicted).
const (
	Scores     = "scores"
	Echo       = "echo"
	CacheBytes = 1 << 20
)

// NumKeys is how many generated keys the data set has besides the tutorial's
// scores: enough that every node of a three-node cluster owns some.
const NumKeys = 300

// Dataset is the slow database's content, the same on every node: the
// tutorial's scores (Tom 630, Jack 589, Sam 567, ...) and key-000 ... key-299.
func Dataset() map[string]string {
	d := seeddb.Scores()
	for i := range NumKeys {
		d[Key(i)] = fmt.Sprint(i * 7)
	}
	return d
}

// Key is the i-th generated key.
func Key(i int) string { return fmt.Sprintf("key-%03d", i) }

// EchoMissing is the one key the group Echo does not have.
const EchoMissing = "missing"

// EchoLoad is the source of the group Echo (as getter.Func(EchoLoad)): the
// value of a key is "v=" and the key, and EchoMissing is not found.
func EchoLoad(_ context.Context, key string) ([]byte, error) {
	if key == EchoMissing {
		return nil, getter.ErrNotFound
	}
	return []byte("v=" + key), nil
}
