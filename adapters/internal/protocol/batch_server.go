package protocol

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/geecache/geecache/cache"
)

// batch answers a batch request that admit has let through: its keys are
// checked against the body's checksum and the limits, then answered by
// this node alone through cache.Registry.ServePeer (an OpGet or OpPeek of
// the keys, an OpRemove, an OpPurge or an OpOffer), so nothing is
// forwarded or told again. A BatchGet's answer holds an entry per key, in
// order; values past the size limit in all are entries that say "ask
// alone".
func (s *Server) batch(ctx context.Context, req Request, loading Listener) Response {
	groupName, op, ok := batchOp(req.Path)
	if !ok {
		return ErrorResponse(CodeBadRequest, "not a batch path: "+clip(req.Path))
	}
	if len(req.Body) > MaxBatchBytes {
		return ErrorResponse(CodeTooLarge, fmt.Sprintf("a batch of %d bytes is over the limit of %d", len(req.Body), MaxBatchBytes))
	}
	if err := checkBody(s.cfg.Secret, req.Header, req.Body); err != nil || Field(req.Header, HeaderChecksum) == "" {
		return ErrorResponse(CodeBadRequest, fmt.Sprintf("the batch does not match its %s", HeaderChecksum))
	}
	memoryOnly := Field(req.Header, HeaderPeer) == PeerMemoryOnly
	// A BatchGet's keys share the body's string: GetMany copies the keys
	// it keeps. Not a memory-only one's: its answer may move a key's
	// entry between the node's caches, under the request's key.
	keys, err := decodeKeys(req.Body, op == BatchGet && !memoryOnly)
	if err != nil {
		return ErrorResponse(CodeBadRequest, "malformed batch: "+err.Error())
	}
	pr := cache.PeerRequest{Group: groupName, Keys: keys}
	switch op {
	case BatchRemove:
		pr.Op = cache.OpRemove
	case BatchOffer:
		// Names only: the group takes the keys it owns from their previous
		// owner under its own ring, from memory (a read, as a GET is).
		pr.Op = cache.OpOffer
	case BatchPurge:
		pr.Op = cache.OpPurge
	default:
		pr.Op = cache.OpGet
		if memoryOnly {
			pr.Op = cache.OpPeek
		}
		return s.batchGet(ctx, pr, loading)
	}
	if err := s.reg.ServePeer(ctx, pr, noAnswers{}); err != nil {
		return s.peerError(err)
	}
	return Response{Status: statusOK, Header: Header{}}
}

// batchGet answers a BatchGet of keys in g. The whole answer stays within
// the size limit: each key's framing (and room to say "ask alone") is set
// aside first, and a value or message that does not fit in what is left
// is an entry that says "ask alone".
func (s *Server) batchGet(ctx context.Context, pr cache.PeerRequest, loading Listener) Response {
	trusted := s.cfg.Secret != nil
	budget := s.cfg.MaxValueBytes - binary.MaxVarintLen64
	for _, k := range pr.Keys {
		budget -= int64(len(k)) + entryFraming
	}
	body := make([]byte, 0, 64*len(pr.Keys)+16)
	body = binary.AppendUvarint(body, uint64(len(pr.Keys)))
	a := &batchAnswers{s: s, ctx: ctx, keys: pr.Keys, group: pr.Group, trusted: trusted, budget: budget, body: body, loading: loading}
	if err := s.reg.ServePeer(ctx, pr, a); err != nil {
		return s.peerError(err)
	}
	return Response{Status: statusOK, Header: Header{"Content-Type": {BatchContentType}}, Body: a.body}
}

// batchAnswers is the cache.PeerReply of a BatchGet: each answer is
// appended to body as its entry, within budget.
type batchAnswers struct {
	s       *Server
	ctx     context.Context
	keys    []string
	group   string
	trusted bool
	budget  int64
	body    []byte
	loading Listener
}

func (a *batchAnswers) Loading() {
	if a.loading != nil {
		a.loading.Loading()
	}
}

func (a *batchAnswers) Answer(i int, v cache.ByteView, ttl time.Duration, err error) {
	key := a.keys[i]
	if err == nil {
		if int64(v.Len()) > a.budget {
			a.body = appendEntry(a.body, entryAlone, key, 0, nil)
			return
		}
		a.budget -= int64(v.Len())
		a.body = appendViewEntry(a.body, key, ttl, v)
		return
	}
	r := a.s.loadError(a.ctx, err, a.trusted, a.group, key)
	st, d := entryLoadErr, time.Duration(0)
	switch r.Code() {
	case CodeNotFound:
		st, d = entryNotFound, ttl
	case CodeNotHeld:
		st = entryNotHeld
	}
	if int64(len(r.Body)) > a.budget {
		a.body = appendEntry(a.body, entryAlone, key, 0, nil)
		return
	}
	a.budget -= int64(len(r.Body))
	a.body = appendEntry(a.body, st, key, d, r.Body)
}
