// Package peertest holds what the test peers of GeeCache's packages share:
// ReadOnly, the writes of a cache.Peer whose transport cannot change
// keys, for the fakes that only fetch.
package peertest

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrReadOnly is what ReadOnly's writes fail with: it wraps
// errors.ErrUnsupported, as a transport that cannot change keys must.
var ErrReadOnly = fmt.Errorf("geecache: test peer cannot change keys: %w", errors.ErrUnsupported)

// ReadOnly, embedded in a test peer, gives it the Remove and Set of a
// cache.Peer: both fail with ErrReadOnly.
type ReadOnly struct{}

// Remove fails with ErrReadOnly.
func (ReadOnly) Remove(context.Context, string, string) error { return ErrReadOnly }

// Set fails with ErrReadOnly.
func (ReadOnly) Set(context.Context, string, string, []byte, time.Duration) error {
	return ErrReadOnly
}

// Batch fails with ErrReadOnly: the group asks key by key instead.
func (ReadOnly) Batch(context.Context, string, []string, bool, func(int, []byte, time.Duration, error)) error {
	return ErrReadOnly
}
