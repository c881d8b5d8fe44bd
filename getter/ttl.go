package getter

// TTLGetter is in a file of its own because mocks/ is generated from
// getter.go alone, and it has no mock.

import (
	"context"
	"time"
)

// A TTLGetter is a Getter that also says how long each value it loads stays
// fresh. A group whose Getter is a TTLGetter calls GetTTL instead of Get
// and keeps the value for ttl (0: the group's default TTL, if any). The
// owner's remaining lifetime travels with the value to the nodes that
// fetch it, so that their copies expire when the owner's does.
type TTLGetter interface {
	Getter
	GetTTL(ctx context.Context, key string) (value []byte, ttl time.Duration, err error)
}

// TTLFunc adapts an ordinary function to the TTLGetter interface; as a
// Getter, it drops the TTL.
type TTLFunc func(ctx context.Context, key string) ([]byte, time.Duration, error)

// Get calls f and drops the TTL.
func (f TTLFunc) Get(ctx context.Context, key string) ([]byte, error) {
	v, _, err := f(ctx, key)
	return v, err
}

// GetTTL calls f(ctx, key).
func (f TTLFunc) GetTTL(ctx context.Context, key string) ([]byte, time.Duration, error) {
	return f(ctx, key)
}
