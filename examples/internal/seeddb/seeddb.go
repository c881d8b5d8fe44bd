// Package seeddb is the GeeCache tutorial's slow database of scores (Tom 630,
// Jack 589, Sam 567, plus Ben 582 and Leo 604 so that every node of the
// three-node demo owns a key), shared by the examples: a source of truth
// that takes a while to answer, logs every lookup, and counts them, so that
// a demo or its test can show how often the cache lets a request through.
package seeddb

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/geecache/geecache/getter"
)

// Scores is the tutorial's data (Tom, Jack, Sam), with two more
// scores: under the default ring the tutorial's three keys are all owned by
// the demo's first node (127.0.0.1:8001), Ben by the second and Leo by the
// third, so the demo shows keys spread over every node.
func Scores() map[string]string {
	return map[string]string{"Tom": "630", "Jack": "589", "Sam": "567", "Ben": "582", "Leo": "604"}
}

// DB is a slow database. It is safe for concurrent use.
type DB struct {
	data  map[string]string
	delay time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	lookups map[string]int
}

// New returns a DB serving data, each lookup taking delay and logged to
// log as "[SlowDB] search key".
func New(data map[string]string, delay time.Duration, log *slog.Logger) *DB {
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
