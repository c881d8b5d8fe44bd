package protocol

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/internal/batchctx"
	"github.com/geecache/geecache/internal/groupbridge"
	"github.com/geecache/geecache/internal/handoff"
)

// batch answers a batch request that admit has let through: its keys are
// checked against the body's checksum and the limits, then answered by
// the group from this node alone (Group.GetMany, RemoveMany or Purge with
// a peer's mark, so nothing is forwarded or told again; an offer's keys
// go to groupbridge.TakeOffer). A BatchGet's answer holds an entry per
// key, in order; values past the size limit in all are entries that say
// "ask alone".
func (s *Server) batch(ctx context.Context, req Request) Response {
	groupName, op, ok := batchOp(req.Path)
	if !ok {
		return ErrorResponse(CodeBadRequest, "not a batch path: "+clip(req.Path))
	}
	if len(req.Body) > MaxBatchBytes {
		return ErrorResponse(CodeTooLarge, fmt.Sprintf("a batch of %d bytes is over the limit of %d", len(req.Body), MaxBatchBytes))
	}
	if err := checkBody(s.cfg.Secret, req.Header, req.Body); err != nil || req.Header.Get(HeaderChecksum) == "" {
		return ErrorResponse(CodeBadRequest, fmt.Sprintf("the batch does not match its %s", HeaderChecksum))
	}
	memoryOnly := req.Header.Get(HeaderPeer) == PeerMemoryOnly || handoff.IsMemoryOnly(ctx)
	// A BatchGet's keys share the body's string: GetMany copies the keys
	// it keeps. Not a memory-only one's: its answer may move a key's
	// entry between the node's caches, under the request's key.
	keys, err := decodeKeys(req.Body, op == BatchGet && !memoryOnly)
	if err != nil {
		return ErrorResponse(CodeBadRequest, "malformed batch: "+err.Error())
	}
	g := s.reg.Lookup(groupName)
	if g == nil {
		return ErrorResponse(CodeUnknownGroup, "no such group: "+clip(groupName))
	}
	switch op {
	case BatchRemove:
		_ = g.RemoveMany(batchctx.With(ctx, &batchctx.Local{}), keys) // this node only: no peers to fail
		return Response{Status: statusOK, Header: Header{}}
	case BatchOffer:
		// Names only: the group takes the keys it owns from their previous
		// owner under its own ring, from memory (a read, as a GET is).
		groupbridge.TakeOffer(ctx, g, keys)
		return Response{Status: statusOK, Header: Header{}}
	case BatchPurge:
		if len(keys) != 0 {
			return ErrorResponse(CodeBadRequest, "a purge has no keys")
		}
		_ = g.Purge(batchctx.With(ctx, &batchctx.Local{}))
		return Response{Status: statusOK, Header: Header{}}
	}
	if req.Header.Get(HeaderPeer) == PeerMemoryOnly {
		ctx = handoff.MemoryOnly(ctx)
	}
	return s.batchGet(ctx, g, keys)
}

// batchGet answers a BatchGet of keys in g. The whole answer stays within
// the size limit: each key's framing (and room to say "ask alone") is set
// aside first, and a value or message that does not fit in what is left
// is an entry that says "ask alone".
func (s *Server) batchGet(ctx context.Context, g *cache.Group, keys []string) Response {
	trusted := s.cfg.Secret != nil
	var ttl time.Duration
	budget := s.cfg.MaxValueBytes - binary.MaxVarintLen64
	for _, k := range keys {
		budget -= int64(len(k)) + entryFraming
	}
	body := make([]byte, 0, 64*len(keys)+16)
	body = binary.AppendUvarint(body, uint64(len(keys)))
	local := &batchctx.Local{TTL: func(_ int, d time.Duration) { ttl = d }}
	g.GetMany(batchctx.With(ctx, local), keys, func(i int, v cache.ByteView, err error) {
		key := keys[i]
		if err == nil {
			if int64(v.Len()) > budget {
				body = appendEntry(body, entryAlone, key, 0, nil)
				return
			}
			budget -= int64(v.Len())
			body = appendViewEntry(body, key, ttl, v)
			return
		}
		r := s.loadError(ctx, err, trusted, g.Name(), key)
		st, d := entryLoadErr, time.Duration(0)
		switch r.Code() {
		case CodeNotFound:
			st, d = entryNotFound, ttl
		case CodeNotHeld:
			st = entryNotHeld
		}
		if int64(len(r.Body)) > budget {
			body = appendEntry(body, entryAlone, key, 0, nil)
			return
		}
		budget -= int64(len(r.Body))
		body = appendEntry(body, st, key, d, r.Body)
	})
	return Response{Status: statusOK, Header: Header{"Content-Type": {BatchContentType}}, Body: body}
}
