//go:build !js

package hosttest

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/geecache/geecache/getter"
)

// The data every node of the WebAssembly examples has (examples/wasm
// keeps its own copy in data.go, which its TestDataMatchesHosttest checks
// against this one): the group Scores over the tutorial's scores and
// generated keys, and the group Echo that answers any key, for the tests
// that send every awkward key through each JavaScript host.

// Group names and the cache size of each group (it holds the whole data
// set, so nothing is evicted).
const (
	Scores     = "scores"
	Echo       = "echo"
	CacheBytes = 1 << 20
)

// NumKeys is how many generated keys the data set has besides the
// tutorial's scores: enough that every node of a three-node cluster owns
// some.
const NumKeys = 300

// Dataset is the slow database's content, the same on every node: the
// tutorial's scores (Tom 630, Jack 589, Sam 567, with Ben 582 and Leo 604)
// and key-000 ... key-299.
func Dataset() map[string]string {
	d := map[string]string{"Tom": "630", "Jack": "589", "Sam": "567", "Ben": "582", "Leo": "604"}
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

// DB is the native nodes' slow database: each lookup takes a while and is
// counted, so that a test can tell which node loaded a key. It is safe for
// concurrent use.
type DB struct {
	data  map[string]string
	delay time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	lookups map[string]int
}

// NewDB returns a DB serving data, each lookup taking delay and logged to
// log as "[SlowDB] search key".
func NewDB(data map[string]string, delay time.Duration, log *slog.Logger) *DB {
	return &DB{data: maps.Clone(data), delay: delay, log: log, lookups: map[string]int{}}
}

// Getter returns the Getter of the node named node: a lookup in the
// database, logged with the node's name. A missing key yields
// "KEY not exist", wrapping getter.ErrNotFound.
func (db *DB) Getter(node string) getter.Getter {
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		db.mu.Lock()
		db.lookups[key]++
		db.mu.Unlock()
		db.log.InfoContext(ctx, "[SlowDB] search key", "node", node, "key", key)
		t := time.NewTimer(db.delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		v, ok := db.data[key]
		if !ok {
			return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
		}
		return []byte(v), nil
	})
}

// Lookups returns how many times key was looked up.
func (db *DB) Lookups(key string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.lookups[key]
}
