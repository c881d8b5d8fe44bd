package cache

import (
	"context"
	"fmt"
)

// ServePeer answers req, a request another node sent through its Peer:
// the one way a peer's request enters this node. A transport's server
// decodes a request into a PeerRequest, calls ServePeer, and encodes what
// it gives reply. Everything is answered from this node alone: a key is
// never forwarded to another node (one hop, so that nodes whose peer lists
// differ cannot send a request around in a loop), and a write changes
// this node's memory only, as the writing node tells every node itself.
//
//   - OpGet: each key as Get would answer it, but loaded here if it is not
//     in memory; reply.Loading is called when a load begins (or is joined),
//     and each key's answer carries how long it stays fresh here.
//   - OpPeek: each key from memory only; ErrNotHeld for a key not held.
//   - OpSet, OpRemove, OpPurge: the change, here only.
//   - OpOffer: the keys this node owns now and does not hold are taken
//     from their previous owner's memory (see Group.OfferKeys); ServePeer
//     returns once that is done, or ctx ends.
//
// It returns an error wrapping ErrUnknownGroup for a group the registry
// does not have, and ErrBadRequest for a request that is not well formed;
// a key's own failure (not found, a load error) goes to reply.Answer, as
// its cause: the asking node names the group and key itself.
func (r *Registry) ServePeer(ctx context.Context, req PeerRequest, reply PeerReply) error {
	g := r.Lookup(req.Group)
	if g == nil {
		return fmt.Errorf("geecache: %w: %q", ErrUnknownGroup, req.Group)
	}
	keys := req.Keys
	switch req.Op {
	case OpGet, OpPeek:
		if len(keys) == 0 {
			return fmt.Errorf("geecache: %w: %v of no key", ErrBadRequest, req.Op)
		}
		if len(keys) == 1 {
			v, ttl, err := g.getLocal(ctx, keys[0], req.Op == OpPeek, reply)
			reply.Answer(0, v, ttl, cause(err))
			return nil
		}
		var res []manyResult
		if req.Op == OpPeek {
			res = make([]manyResult, len(keys))
			g.heldMany(keys, res)
		} else {
			res = g.getMany(ctx, keys, reply)
		}
		for i := range res {
			reply.Answer(i, ByteView{b: res[i].e.v}, g.fresh.remaining(res[i].e.exp), cause(res[i].err))
		}
	case OpSet:
		if len(keys) != 1 || req.TTL < 0 {
			return fmt.Errorf("geecache: %w: a set of %d keys, TTL %v", ErrBadRequest, len(keys), req.TTL)
		}
		g.setLocal(keys[0], req.Value, req.TTL)
	case OpRemove:
		for _, k := range keys {
			g.removeLocal(k)
		}
	case OpPurge:
		if len(keys) != 0 {
			return fmt.Errorf("geecache: %w: a purge has no keys", ErrBadRequest)
		}
		g.purgeLocal()
	case OpOffer:
		g.takeOffer(ctx, keys)
	default:
		return fmt.Errorf("geecache: %w: unknown op %v", ErrBadRequest, req.Op)
	}
	return nil
}

// cause is err without the *Error that names its group and key.
func cause(err error) error {
	if e, ok := err.(*Error); ok {
		return e.Err
	}
	return err
}
