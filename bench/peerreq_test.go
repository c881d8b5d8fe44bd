package bench

import (
	"context"
	"time"

	"github.com/geecache/geecache/cache"
)

// warmHere has reg's group answer key as a peer's Get would make it: loaded
// there, from its own source, and never forwarded.
func warmHere(ctx context.Context, reg *cache.Registry, group, key string) error {
	var r keyErr
	if err := reg.ServePeer(ctx, cache.PeerRequest{Op: cache.OpGet, Group: group, Keys: []string{key}}, &r); err != nil {
		return err
	}
	return r.err
}

// dropHere drops keys from reg's group only, as a peer's Remove does.
func dropHere(ctx context.Context, reg *cache.Registry, group string, keys ...string) {
	_ = reg.ServePeer(ctx, cache.PeerRequest{Op: cache.OpRemove, Group: group, Keys: keys}, &keyErr{})
}

// keyErr is a cache.PeerReply that keeps the last key's error.
type keyErr struct{ err error }

func (r *keyErr) Answer(_ int, _ cache.ByteView, _ time.Duration, err error) { r.err = err }
func (*keyErr) Loading()                                                     {}
