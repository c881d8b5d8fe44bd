// Package peertest holds what the test peers of GeeCache's packages share:
// Fetch, the Do of a cache.Peer that only fetches one key at a time and
// whose transport cannot change keys.
package peertest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// ErrReadOnly is what Fetch's writes fail with: it wraps
// errors.ErrUnsupported, as a transport that cannot change keys must.
var ErrReadOnly = fmt.Errorf("geecache: test peer cannot change keys: %w", errors.ErrUnsupported)

// Fetch is the Do of a test peer that answers an OpGet or OpPeek of one
// key with get, and fails every other request with ErrReadOnly: a request
// of many keys is then sent again key by key, and a write names the peer
// as read-only. An error of get that wraps getter.ErrNotFound or
// cache.ErrNotHeld is the key's answer; any other is the request's
// failure.
func Fetch(req cache.PeerRequest, reply cache.PeerReply, get func(key string) ([]byte, time.Duration, error)) error {
	if (req.Op != cache.OpGet && req.Op != cache.OpPeek) || len(req.Keys) != 1 {
		return ErrReadOnly
	}
	v, ttl, err := get(req.Keys[0])
	if err != nil && !errors.Is(err, getter.ErrNotFound) && !errors.Is(err, cache.ErrNotHeld) {
		return err
	}
	reply.Answer(0, cache.ByteViewOf(v), ttl, err)
	return nil
}

// Get asks p for key of group as a group does (an OpGet of one key) and
// returns a copy of the answer, or the failure of the request, as one
// error.
func Get(ctx context.Context, p cache.Peer, group, key string) ([]byte, time.Duration, error) {
	var a answer
	if err := p.Do(ctx, cache.PeerRequest{Op: cache.OpGet, Group: group, Keys: []string{key}}, &a); err != nil {
		return nil, 0, err
	}
	return a.v, a.ttl, a.err
}

// answer keeps the answer to a request of one key.
type answer struct {
	v   []byte
	ttl time.Duration
	err error
}

func (a *answer) Answer(_ int, v cache.ByteView, ttl time.Duration, err error) {
	a.v, a.ttl, a.err = v.ByteSlice(), ttl, err
}

func (*answer) Loading() {}
