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

// seedScores is the seed article's database.
var seedScores = map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"}

// slowDB is the seed's slow database: every lookup takes delay. It is the
// one source of truth the whole cluster shares, and it counts its lookups
// per key so that the demo (and its test) can show how often the cache
// lets a request through.
type slowDB struct {
	data  map[string]string
	delay time.Duration
	log   *slog.Logger

	mu   sync.Mutex
	hits map[string]int
}

func newSlowDB(data map[string]string, delay time.Duration, log *slog.Logger) *slowDB {
	return &slowDB{data: maps.Clone(data), delay: delay, log: log, hits: map[string]int{}}
}

// getter returns the Getter of the node at addr: a lookup in the database,
// logged with the node's address.
func (db *slowDB) getter(addr string) getter.Getter {
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		db.mu.Lock()
		db.hits[key]++
		db.mu.Unlock()
		db.log.Info("[SlowDB] search key", "node", addr, "key", key)
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

// Hits returns how many times key was looked up.
func (db *slowDB) Hits(key string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.hits[key]
}
