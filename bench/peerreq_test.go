package bench

import (
	"context"
	"errors"
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

// askPeer sends p a request of op (cache.OpGet or cache.OpPeek) for key
// of group, as a group's Get would, and returns the answer: the request's
// error, or else the key's.
func askPeer(ctx context.Context, p cache.Peer, op cache.PeerOp, group, key string) (cache.ByteView, time.Duration, error) {
	var r oneAnswer
	if err := p.Do(ctx, cache.PeerRequest{Op: op, Group: group, Keys: []string{key}}, &r); err != nil {
		return cache.ByteView{}, 0, err
	}
	if !r.got {
		return cache.ByteView{}, 0, errNoAnswer
	}
	return r.v, r.ttl, r.err
}

// errNoAnswer is askPeer's error when the peer answered no key.
var errNoAnswer = errors.New("the peer did not answer the key")

// oneAnswer is a cache.PeerReply that keeps the answer of a one-key request.
type oneAnswer struct {
	got bool
	v   cache.ByteView
	ttl time.Duration
	err error
}

func (r *oneAnswer) Answer(_ int, v cache.ByteView, ttl time.Duration, err error) {
	r.got, r.v, r.ttl, r.err = true, v, ttl, err
}
func (*oneAnswer) Loading() {}
