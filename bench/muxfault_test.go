package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Fault tests of the geecache-mux prototype (muxrt_test.go): the
// properties a multiplexed option of the binding must keep, shown on the
// design before it is built.

// slowGetter blocks the first load of a key that starts with "slow" (on
// whichever node) until release is closed or the load's context ends, and
// closes started when it begins; every other load answers at once.
type slowGetter struct {
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func newSlowGetter() *slowGetter {
	return &slowGetter{started: make(chan struct{}), release: make(chan struct{})}
}

func (s *slowGetter) Get(ctx context.Context, key string) ([]byte, error) {
	first := false
	if strings.HasPrefix(key, "slow") {
		s.once.Do(func() { first = true; close(s.started) })
	}
	if first {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return hitValue(key), nil
}

var _ getter.Getter = (*slowGetter)(nil)

// keysOwnedBy returns n keys with prefix that c's node owner owns.
func keysOwnedBy(c *ourCluster, owner, n int, prefix string) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if k := fmt.Sprintf("%s-%d", prefix, i); c.nodes[0].pool.Owner(k) == c.nodes[owner].pool.Self() {
			keys = append(keys, k)
		}
	}
	return keys
}

// getResult is the outcome of one Get.
type getResult struct {
	v   cache.ByteView
	err error
}

// TestMuxSlowKeyDoesNotStallOthers: while node B loads one key slowly, its
// request in flight on node A's one connection to B, A's Gets of other
// keys B owns are answered by B over the same connection: no key waits
// behind another's stream.
func TestMuxSlowKeyDoesNotStallOthers(t *testing.T) {
	g := newSlowGetter()
	c, _, _ := newOurMuxClusterOf(t, 3, httpBudget, g)
	a := c.nodes[0].group
	slow := keysOwnedBy(c, 1, 1, "slow")[0]
	fast := keysOwnedBy(c, 1, 8, "fast")
	// Shorter than the client's Timeout (10 s): a Get stalled behind the
	// slow key would fail, not time out into a local load.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	slowDone := make(chan getResult, 1)
	go func() {
		v, err := a.Get(ctx, slow)
		slowDone <- getResult{v, err}
	}()
	<-g.started // B is loading the slow key for A
	released := false
	defer func() {
		if !released {
			close(g.release)
		}
	}()
	peer0 := a.Stats().PeerLoads
	for _, k := range fast {
		v, err := a.Get(ctx, k)
		if err != nil || !v.EqualBytes(hitValue(k)) {
			t.Fatalf("Get(%q) = %q, %v while another key was loading", k, v.String(), err)
		}
	}
	if d := a.Stats().PeerLoads - peer0; d != int64(len(fast)) {
		t.Errorf("%d of %d keys fetched from their owner while another key was loading", d, len(fast))
	}
	select {
	case r := <-slowDone:
		t.Fatalf("the slow key returned before its load was released: %v", r.err)
	default:
	}
	close(g.release)
	released = true
	if r := <-slowDone; r.err != nil || !r.v.EqualBytes(hitValue(slow)) {
		t.Errorf("slow key: %q, %v", r.v.String(), r.err)
	}
	if e := a.Stats().PeerErrors; e != 0 {
		t.Errorf("%d peer errors", e)
	}
}

// TestMuxResetFailsPendingAndRedials: when the peer's end of the one
// connection closes with a request in flight, that request fails at once
// (node A loads the key itself and answers it right), and the next request
// opens a new connection and is answered by the peer.
func TestMuxResetFailsPendingAndRedials(t *testing.T) {
	g := newSlowGetter()
	c, handlers, _ := newOurMuxClusterOf(t, 3, httpBudget, g)
	a := c.nodes[0].group
	slow := keysOwnedBy(c, 1, 1, "slow")[0]
	after := keysOwnedBy(c, 1, 1, "after")[0]
	// Shorter than the client's Timeout (10 s): a pending fetch that the
	// reset did not end would outlive it and fail the Get, instead of
	// timing out into a local load that looks like the right answer.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	slowDone := make(chan getResult, 1)
	go func() {
		v, err := a.Get(ctx, slow)
		slowDone <- getResult{v, err}
	}()
	<-g.started
	accepts := c.nodes[1].ln.accepts.Load()
	errs0 := a.Stats().PeerErrors
	// B's end of the connection goes away (as a reset would), its load
	// still blocked: A must not wait for it.
	handlers[1].mu.Lock()
	for conn := range handlers[1].conns {
		_ = conn.Close()
	}
	handlers[1].mu.Unlock()
	r := <-slowDone  // the fetch failed and A loaded the key itself
	close(g.release) // B's load ends too
	if r.err != nil || !r.v.EqualBytes(hitValue(slow)) {
		t.Errorf("slow key after the reset: %q, %v", r.v.String(), r.err)
	}
	if d := a.Stats().PeerErrors - errs0; d != 1 {
		t.Errorf("%d peer errors after the reset, want 1", d)
	}
	peer0 := a.Stats().PeerLoads
	v, err := a.Get(ctx, after)
	if err != nil || !v.EqualBytes(hitValue(after)) {
		t.Fatalf("Get after the reset: %q, %v", v.String(), err)
	}
	if a.Stats().PeerLoads-peer0 != 1 || c.nodes[1].ln.accepts.Load() == accepts {
		t.Errorf("after the reset: peer loads +%d, accepts +%d; want a new connection and the peer's answer",
			a.Stats().PeerLoads-peer0, c.nodes[1].ln.accepts.Load()-accepts)
	}
}
