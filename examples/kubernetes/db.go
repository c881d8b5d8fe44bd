package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/geecache/geecache/getter"
)

// scores is the tutorial's data (Tom, Jack, Sam), with two more scores
// (Ben, Leo), so that the keys spread over more nodes.
func scores() map[string]string {
	return map[string]string{"Tom": "630", "Jack": "589", "Sam": "567", "Ben": "582", "Leo": "604"}
}

// slowDB is the example's slow database: a source of truth that takes a
// while to answer and logs every lookup. It is safe for concurrent use.
type slowDB struct {
	data  map[string]string
	delay time.Duration
	log   *slog.Logger
}

// newSlowDB returns a database serving data, each lookup taking delay and
// logged to log as "[SlowDB] search key".
func newSlowDB(data map[string]string, delay time.Duration, log *slog.Logger) *slowDB {
	return &slowDB{data: maps.Clone(data), delay: delay, log: log}
}

// Getter returns the Getter of the node named node: a lookup in the
// database, logged with the node's name. A missing key yields
// "KEY not exist", wrapping getter.ErrNotFound.
func (db *slowDB) Getter(node string) getter.Getter {
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
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
