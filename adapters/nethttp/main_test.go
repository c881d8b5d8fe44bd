package nethttp

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/cache"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leakOptions()...) }

func mustClient(t testing.TB, addr string, o *ClientOptions) *Client {
	t.Helper()
	c, err := NewClient(addr, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// answers is a cache.PeerReply that hands each answer to each and each
// "I am loading" sign to loading; either may be nil.
type answers struct {
	each    func(i int, v []byte, ttl time.Duration, err error)
	loading func()
}

func (a answers) Answer(i int, v cache.ByteView, ttl time.Duration, err error) {
	if a.each != nil {
		a.each(i, bytesOf(v), ttl, err)
	}
}

func (a answers) Loading() {
	if a.loading != nil {
		a.loading()
	}
}

// bytesOf returns v's bytes as the transport gave them, without a copy
// (ByteView.WriteTo hands them to one Write), so that the tests of the
// client's allocations count the client's alone. Nobody modifies them.
func bytesOf(v cache.ByteView) []byte {
	var w grab
	_, _ = v.WriteTo(&w)
	return w.b
}

// grab keeps the bytes of its one Write.
type grab struct{ b []byte }

func (w *grab) Write(p []byte) (int, error) {
	w.b = p
	return len(p), nil
}

// peerGet asks p for key of group as a group does (a cache.OpGet of one
// key) and returns the answer, or the failure of the request, as one
// error.
func peerGet(ctx context.Context, p cache.Peer, group, key string) ([]byte, time.Duration, error) {
	return askOne(ctx, p, cache.OpGet, group, key, nil)
}

// askOne sends an op (cache.OpGet or OpPeek) of key to p, as peerGet;
// loading, if not nil, hears the peer's signs that it is loading.
func askOne(ctx context.Context, p cache.Peer, op cache.PeerOp, group, key string, loading func()) ([]byte, time.Duration, error) {
	a := &oneAnswer{loading: loading}
	a.keys[0] = key
	if err := p.Do(ctx, cache.PeerRequest{Op: op, Group: group, Keys: a.keys[:]}, a); err != nil {
		return nil, 0, err
	}
	return a.v, a.ttl, a.err
}

// oneAnswer is a request's one key and its answer, in one allocation, as
// a group's own are: the benchmarks of the client count the client's
// allocations, not the test's.
type oneAnswer struct {
	keys    [1]string
	w       grab
	v       []byte
	ttl     time.Duration
	err     error
	loading func()
}

func (a *oneAnswer) Answer(_ int, v cache.ByteView, ttl time.Duration, err error) {
	a.w.b = nil
	_, _ = v.WriteTo(&a.w)
	a.v, a.ttl, a.err = a.w.b, ttl, err
}

func (a *oneAnswer) Loading() {
	if a.loading != nil {
		a.loading()
	}
}

// peerSet stores value under key at p, the key's owner (cache.OpSet).
func peerSet(ctx context.Context, p cache.Peer, group, key string, value []byte, ttl time.Duration) error {
	return p.Do(ctx, cache.PeerRequest{Op: cache.OpSet, Group: group, Keys: []string{key}, Value: value, TTL: ttl}, answers{})
}
