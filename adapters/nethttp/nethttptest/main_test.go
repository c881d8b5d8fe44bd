//go:build !js

package nethttptest_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/cache"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// localPeer is a node's Registry as a cache.Peer: its requests are
// answered in process, by ServePeer, from that node alone.
type localPeer struct{ reg *cache.Registry }

func (p localPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return p.reg.ServePeer(ctx, req, reply)
}

func (localPeer) Addr() string { return "local" }
