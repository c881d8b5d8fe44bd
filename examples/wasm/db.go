package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/geecache/geecache/getter"
)

// slowDB is the example's slow database: a source of truth that takes a
// while to answer and logs every lookup, and counts them, so that the
// demo and its tests can show how often the cache lets a request through.
// It is safe for concurrent use.
type slowDB struct {
	data  map[string]string
	delay time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	lookups map[string]int
}

// newSlowDB returns a database serving data, each lookup taking delay and
// logged to log as "[SlowDB] search key".
func newSlowDB(data map[string]string, delay time.Duration, log *slog.Logger) *slowDB {
	return &slowDB{data: maps.Clone(data), delay: delay, log: log, lookups: map[string]int{}}
}

// Getter returns the Getter of the node named node: a lookup in the
// database, logged with the node's name. A missing key yields
// "KEY not exist", wrapping getter.ErrNotFound.
func (db *slowDB) Getter(node string) getter.Getter {
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
func (db *slowDB) Lookups(key string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.lookups[key]
}
