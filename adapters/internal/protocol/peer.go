package protocol

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A Listener hears an owner's signs that it is loading: a
// cache.PeerReply on the asking node, a binding's interim answer on the
// owner's.
type Listener interface{ Loading() }

// A Sender sends the protocol's requests to one peer over a binding's
// transport: the calls Do makes of a cache.PeerRequest.
type Sender interface {
	// Get sends a GET of key (memory-only with peek) and reads its answer:
	// the value and its lifetime, or an error. loading, if not nil, hears
	// the peer's interim "102 Processing" signs where the transport
	// carries them.
	Get(ctx context.Context, group, key string, peek bool, loading Listener) ([]byte, time.Duration, error)
	// Set sends a PUT of value under key, Remove a DELETE of key.
	Set(ctx context.Context, group, key string, value []byte, ttl time.Duration) error
	Remove(ctx context.Context, group, key string) error
	// Batch sends one batch request of op for keys, which fit (see
	// SplitBatch), and gives each entry of its answer to each (a BatchGet
	// only).
	Batch(ctx context.Context, group string, op BatchOp, keys []string, peek bool, loading Listener, each func(i int, v []byte, ttl time.Duration, err error)) error
}

// Do is the client side every binding shares of cache.Peer.Do: it turns
// req into the protocol's requests and sends them with s. One key is a
// GET, PUT or DELETE; many keys are batches, split over the limits
// (SplitBatch), where a key too long for a batch is removed alone, left
// out of an offer, or answered "ask alone" (errors.ErrUnsupported) so that
// the group asks for it alone. A key's answer (a value, "not found", "not
// held") goes to reply; a failure of the request is Do's error.
func Do(ctx context.Context, s Sender, req cache.PeerRequest, reply cache.PeerReply) error {
	keys := req.Keys
	switch req.Op {
	case cache.OpGet, cache.OpPeek:
		peek := req.Op == cache.OpPeek
		if len(keys) == 1 {
			v, ttl, err := s.Get(ctx, req.Group, keys[0], peek, reply)
			if err != nil && !errors.Is(err, getter.ErrNotFound) && !errors.Is(err, cache.ErrNotHeld) {
				return err
			}
			reply.Answer(0, cache.ByteViewOf(v), ttl, err)
			return nil
		}
		return sendSplit(ctx, s, req.Group, BatchGet, keys, peek, reply)
	case cache.OpSet:
		if len(keys) != 1 {
			return fmt.Errorf("geecache: %w: a set of %d keys", cache.ErrBadRequest, len(keys))
		}
		return s.Set(ctx, req.Group, keys[0], req.Value, req.TTL)
	case cache.OpRemove:
		if len(keys) == 1 {
			return s.Remove(ctx, req.Group, keys[0])
		}
		return sendSplit(ctx, s, req.Group, BatchRemove, keys, false, nil)
	case cache.OpPurge:
		return s.Batch(ctx, req.Group, BatchPurge, nil, false, nil, nil)
	case cache.OpOffer:
		return sendSplit(ctx, s, req.Group, BatchOffer, keys, false, nil)
	}
	return fmt.Errorf("geecache: %w: unknown op %v", cache.ErrBadRequest, req.Op)
}

// sendSplit sends keys in batches of op over the limits, each answer to
// reply by its index in keys (a BatchGet; reply is nil for the others).
// It stops at the first error. An entry a peer sends past the keys of its
// request reaches reply with an index at or past len(keys), never the
// index of a key of the next request, whose name it was not checked
// against.
func sendSplit(ctx context.Context, s Sender, group string, op BatchOp, keys []string, peek bool, reply cache.PeerReply) error {
	var loading Listener
	if reply != nil {
		loading = reply
	}
	var first error
	SplitBatch(keys, func(lo, hi int) {
		if first != nil {
			return
		}
		if hi-lo == 1 && TooLongForBatch(keys[lo]) {
			switch op {
			case BatchRemove:
				first = s.Remove(ctx, group, keys[lo])
			case BatchGet:
				reply.Answer(lo, cache.ByteView{}, 0, errAlone)
			}
			return
		}
		var each func(int, []byte, time.Duration, error)
		if reply != nil {
			n := hi - lo
			each = func(i int, v []byte, ttl time.Duration, err error) {
				if i >= n {
					reply.Answer(len(keys)+i-n, cache.ByteViewOf(v), ttl, err)
					return
				}
				reply.Answer(lo+i, cache.ByteViewOf(v), ttl, err)
			}
		}
		first = s.Batch(ctx, group, op, keys[lo:hi], peek, loading, each)
	})
	return first
}
