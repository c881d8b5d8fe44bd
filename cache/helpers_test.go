package cache_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/internal/peertest"
)

// answerReads is the Do of a test peer that answers reads one key at a
// time with get and cannot change keys: an OpGet or OpPeek of one key is
// answered by get (such a peer has no memory of its own, so a peek is
// served as a read), and anything else (many keys, a write, an offer)
// fails with peertest.ErrReadOnly, which wraps errors.ErrUnsupported: the
// group then asks key by key, or names the peer in the write's error.
func answerReads(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply, get func(ctx context.Context, key string) ([]byte, time.Duration, error)) error {
	if (req.Op != cache.OpGet && req.Op != cache.OpPeek) || len(req.Keys) != 1 {
		return peertest.ErrReadOnly
	}
	v, ttl, err := get(ctx, req.Keys[0])
	reply.Answer(0, cache.ByteViewOf(v), ttl, err)
	return nil
}

// copyReply passes a node's answers on as a transport does: each value a
// copy of the answering node's bytes.
type copyReply struct{ cache.PeerReply }

func (r copyReply) Answer(i int, v cache.ByteView, ttl time.Duration, err error) {
	r.PeerReply.Answer(i, cache.ByteViewOf(v.ByteSlice()), ttl, err)
}

// serve hands req to reg as a transport's server does, and its answers
// to reply as the transport's client does (copies of the values).
func serve(ctx context.Context, reg *cache.Registry, req cache.PeerRequest, reply cache.PeerReply) error {
	return reg.ServePeer(ctx, req, copyReply{reply})
}

// answers is a cache.PeerReply that keeps what it is given, for a test
// that calls ServePeer or a Peer's Do itself.
type answers struct {
	vals    []cache.ByteView
	ttls    []time.Duration
	errs    []error
	got     []bool
	loading int
}

func newAnswers(n int) *answers {
	return &answers{vals: make([]cache.ByteView, n), ttls: make([]time.Duration, n), errs: make([]error, n), got: make([]bool, n)}
}

func (a *answers) Answer(i int, v cache.ByteView, ttl time.Duration, err error) {
	a.vals[i], a.ttls[i], a.errs[i], a.got[i] = v, ttl, err, true
}

func (a *answers) Loading() { a.loading++ }

// errNoAnswer is serveKey's error for a key the node did not answer.
var errNoAnswer = errors.New("no answer for the key")

// serveKey asks g's node for key as a peer's request of op (cache.OpGet
// or cache.OpPeek) does, and returns the node's answer: the value, how
// long it stays fresh there, and the key's error.
func serveKey(ctx context.Context, reg *cache.Registry, g *cache.Group, op cache.PeerOp, key string) (cache.ByteView, time.Duration, error) {
	a := newAnswers(1)
	if err := reg.ServePeer(ctx, cache.PeerRequest{Op: op, Group: g.Name(), Keys: []string{key}}, a); err != nil {
		return cache.ByteView{}, 0, err
	}
	if !a.got[0] {
		return cache.ByteView{}, 0, fmt.Errorf("%s: %w", key, errNoAnswer)
	}
	return a.vals[0], a.ttls[0], a.errs[0]
}

// serveWrite has g's node apply a peer's write (cache.OpSet, OpRemove or
// OpPurge) to its memory alone, as ServePeer does.
func serveWrite(ctx context.Context, reg *cache.Registry, g *cache.Group, req cache.PeerRequest) error {
	req.Group = g.Name()
	return reg.ServePeer(ctx, req, newAnswers(len(req.Keys)))
}
