// Package getter defines the data-source side of a GeeCache group: the
// Getter a group calls on a miss to load a value from the slow source of
// truth, and small helpers for writing one.
//
// A Getter is called at most once at a time per key and node (the cache
// suppresses duplicate loads), but it may be called concurrently for
// different keys, so it must be safe for concurrent use.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/reads.md
package getter

import (
	"context"
	"errors"
	"maps"
)

// ErrNotFound is returned by a Getter for a key that does not exist in the
// source of truth. The cache passes it through unchanged (errors.Is works
// across nodes, too), so that callers can tell "no such key" from "source
// unavailable", and it never falls back to another load for it.
var ErrNotFound = errors.New("key not found")

// A Getter loads the value of a key from the source of truth.
//
// Get must honour ctx: it is cancelled when every caller waiting for the
// key has gone. It returns ErrNotFound (possibly wrapped) for a key that
// does not exist. The cache copies the returned slice, so Get may reuse it
// after returning.
type Getter interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// Func adapts an ordinary function to the Getter interface, as
// http.HandlerFunc does for http.Handler.
type Func func(ctx context.Context, key string) ([]byte, error)

// Get calls f(ctx, key).
func (f Func) Get(ctx context.Context, key string) ([]byte, error) {
	return f(ctx, key)
}

// Map returns a Getter that serves the values of m, and ErrNotFound for any
// other key. It copies m, so later changes to m are not seen. It is meant
// for tests, examples and small static data sets.
func Map(m map[string]string) Getter {
	data := maps.Clone(m)
	return Func(func(ctx context.Context, key string) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v, ok := data[key]
		if !ok {
			return nil, ErrNotFound
		}
		return []byte(v), nil
	})
}
