package protocol

import (
	"context"
	"time"

	"github.com/geecache/geecache/cache"
)

// oneReply is the cache.PeerReply of a request of one key.
type oneReply struct {
	v   cache.ByteView
	ttl time.Duration
	err error
}

func (r *oneReply) Answer(_ int, v cache.ByteView, ttl time.Duration, err error) {
	r.v, r.ttl, r.err = v, ttl, err
}

func (*oneReply) Loading() {}

// peerGet asks reg for key of group as a peer does (cache.OpGet): from
// this node alone, loaded here if it is not in memory.
func peerGet(ctx context.Context, reg *cache.Registry, group, key string) (cache.ByteView, time.Duration, error) {
	var r oneReply
	if err := reg.ServePeer(ctx, cache.PeerRequest{Op: cache.OpGet, Group: group, Keys: []string{key}}, &r); err != nil {
		return cache.ByteView{}, 0, err
	}
	return r.v, r.ttl, r.err
}
