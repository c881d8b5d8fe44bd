//go:build !js

package nethttptest_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/cache"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// value is a cache.PeerReply that keeps the answer of a request of one key.
type value struct {
	v   []byte
	ttl time.Duration
	err error
}

func (a *value) Answer(_ int, v cache.ByteView, ttl time.Duration, err error) {
	a.v, a.ttl, a.err = v.ByteSlice(), ttl, err
}

func (*value) Loading() {}

// peerGet asks p for key of group as a group does (a cache.OpGet of one
// key) and returns the answer, or the failure of the request, as one
// error.
func peerGet(ctx context.Context, p cache.Peer, group, key string) ([]byte, time.Duration, error) {
	var a value
	if err := p.Do(ctx, cache.PeerRequest{Op: cache.OpGet, Group: group, Keys: []string{key}}, &a); err != nil {
		return nil, 0, err
	}
	return a.v, a.ttl, a.err
}

// localPeer is a node's Registry as a cache.Peer: its requests are
// answered in process, by ServePeer, from that node alone.
type localPeer struct{ reg *cache.Registry }

func (p localPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return p.reg.ServePeer(ctx, req, reply)
}

func (localPeer) Addr() string { return "local" }
