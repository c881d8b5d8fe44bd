// Package peertest holds what the test peers of GeeCache's packages share:
// Fetch, the Do of a cache.Peer that only fetches one key at a time and
// whose transport cannot change keys.
package peertest

import (
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
