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
