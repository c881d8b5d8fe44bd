//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// The tests of faulty peers that a cluster of nethttptest can stage.

// loads is a source per node that answers "v:"+key ("not found" for a key
// beginning with "missing") and counts its calls per node and key.
type loads struct {
	mu    sync.Mutex
	calls map[string]int // by fmt.Sprint(node, "/", key)
}

func (l *loads) getter(i int) getter.Getter {
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		l.mu.Lock()
		if l.calls == nil {
			l.calls = map[string]int{}
		}
		l.calls[fmt.Sprint(i, "/", key)]++
		l.mu.Unlock()
		if len(key) >= 7 && key[:7] == "missing" {
			return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
		}
		return []byte("v:" + key), nil
	})
}

func (l *loads) count(node int, key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[fmt.Sprint(node, "/", key)]
}

// countingTransport counts the requests sent to each host, and to each
// host for each key, but for memory-only requests.
type countingTransport struct {
	http.RoundTripper
	mu    sync.Mutex
	sent  map[string]int64    // by host
	byKey map[[2]string]int64 // by host and key
}

func newCountingTransport(t *testing.T) *countingTransport {
	rt := nethttp.NewTransport()
	t.Cleanup(rt.CloseIdleConnections)
	return &countingTransport{RoundTripper: rt, sent: map[string]int64{}, byKey: map[[2]string]int64{}}
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get(protocol.HeaderPeer) == protocol.PeerMemoryOnly {
		// A new owner asking the ring's previous one (just after the
		// nodes started): not a request these tests count.
		return c.RoundTripper.RoundTrip(r)
	}
	_, key, _ := protocol.ParsePath(r.URL.EscapedPath())
	c.mu.Lock()
	c.sent[r.URL.Host]++
	c.byKey[[2]string{r.URL.Host, key}]++
	c.mu.Unlock()
	return c.RoundTripper.RoundTrip(r)
}

// to returns how many requests were sent to the node at addr.
func (c *countingTransport) to(addr string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent[strings.TrimPrefix(addr, "http://")]
}

// toFor returns how many requests for key were sent to the node at addr.
func (c *countingTransport) toFor(addr, key string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byKey[[2]string{strings.TrimPrefix(addr, "http://"), key}]
}

// ownedBy returns n keys, prefix plus a number, that owner owns.
func ownedBy(owner *nethttptest.Node, prefix string, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if k := fmt.Sprint(prefix, i); owner.Owner(k) == owner {
			keys = append(keys, k)
		}
	}
	return keys
}

// A peer that accepts and never answers: every Get is answered (by the
// hedge's local load), the peer is ejected after EjectAfter slow fetches,
// and then no request reaches it at all; nothing leaks (goleak).
func TestHungPeerIsHedgedAndEjected(t *testing.T) {
	rt := newCountingTransport(t)
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{PoolOptions: nethttp.PoolOptions{Transport: rt},
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{EjectAfter: 3, EjectFor: time.Hour,
			HedgeMin: time.Millisecond, HedgeMax: time.Millisecond, SlowAfter: 50 * time.Millisecond}}})
	a, hung := nodes[0], nodes[1]
	hung.SetFault(nethttptest.Fault{Hang: true})
	keys := ownedBy(hung, "key-", 1000)
	g := a.Group
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	get := func(i int) {
		t.Helper()
		k := keys[i]
		v, err := g.Get(ctx, k)
		if err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%q) = %q, %v", k, v, err)
		}
	}
	// Every Get is answered by its hedge until the peer is ejected (the
	// fetches the hedges beat fail after SlowAfter). Bounded: 10 s.
	deadline := time.Now().Add(10 * time.Second)
	i := 0
	for s := g.Stats(); len(s.Peers) == 0 || !s.Peers[0].Ejected; s = g.Stats() {
		if time.Now().After(deadline) || i == len(keys)-100 {
			t.Fatalf("the hung peer was not ejected: %+v", s)
		}
		get(i)
		i++
		time.Sleep(time.Millisecond)
	}
	// Ejected: Gets are loaded here at once, without asking it.
	before := g.Stats()
	for j := range 100 {
		get(i + j)
	}
	s := g.Stats()
	if s.EjectedLoads-before.EjectedLoads != 100 || s.Hedges != before.Hedges || s.PeerErrors != 0 {
		t.Fatalf("after the ejection: %+v; want 100 loads without a fetch, no hedge, no error seen by a caller", s)
	}
	testkit.WaitFor(t, "the fetches the hedges beat to end", func() bool { return g.Stats().Peers[0].InFlight == 0 })
	if n := rt.to(hung.Addr); n > s.Hedges {
		t.Fatalf("the hung peer got %d requests; want at most the %d hedged fetches", n, s.Hedges)
	}
}

// A missing key owned by a hung peer (as a SIGSTOPped node is: its kernel
// still accepts) is answered "not found" by the local load after the hedge
// delay, as a present key is its value, with the defaults: no fetch seen
// yet, no wait for the client's timeout. The fetches the hedges beat count
// as failures at SlowAfter and eject the peer.
func TestMissingKeyOfHungOwnerIsNotFoundAtOnce(t *testing.T) {
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{SlowAfter: 50 * time.Millisecond}}})
	a, hung := nodes[0], nodes[1]
	hung.SetFault(nethttptest.Fault{Hang: true})
	g := a.Group
	missing, present := ownedBy(hung, "missing-", 3), ownedBy(hung, "key-", 3)
	// A deadline far beyond the hedge delay: a Get that waited for the
	// owner would end with it, not with the local answer.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		if _, err := g.Get(ctx, missing[i]); !errors.Is(err, getter.ErrNotFound) {
			t.Fatalf("Get(%s) = %v; want ErrNotFound from the local load", missing[i], err)
		}
		if v, err := g.Get(ctx, present[i]); err != nil || v.String() != "v:"+present[i] {
			t.Fatalf("Get(%s) = %q, %v", present[i], v, err)
		}
	}
	testkit.WaitFor(t, "the ejection", func() bool { s := g.Stats(); return len(s.Peers) == 1 && s.Peers[0].Ejected })
	testkit.WaitFor(t, "the fetches to end", func() bool { return g.Stats().Peers[0].InFlight == 0 })
}

// A peer that crashes and comes back: while it is gone its keys are loaded
// locally, and after it restarts (on the same address) and the ejection
// ends, a probe brings it back and its keys are fetched from it again.
func TestPeerCrashAndRestart(t *testing.T) {
	var src loads
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{Getter: src.getter,
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	a, b := nodes[0], nodes[1]
	keys := ownedBy(b, "k", 20)
	ctx := context.Background()
	b.SetFault(nethttptest.Fault{Down: true})
	for _, k := range keys[:10] {
		if v, err := a.Group.Get(ctx, k); err != nil || v.String() != "v:"+k {
			t.Fatalf("with b down: Get(%q) = %q, %v", k, v, err)
		}
	}
	if s := a.Group.Stats(); s.Peers[0].Ejections == 0 {
		t.Fatalf("b was not ejected: %+v", s.Peers)
	}
	b.SetFault(nethttptest.Fault{}) // b restarts on its address
	// The ejection lasts at most 1.25 s by default; after it, keys of b
	// come from b again. Bounded: at most 10 s of Gets.
	deadline := time.Now().Add(10 * time.Second)
	for src.count(1, keys[15]) == 0 && time.Now().Before(deadline) {
		if err := nethttp.PeerRemove(ctx, nethttp.LocalPeer(a.Registry), "scores", keys[15]); err != nil {
			t.Fatal(err)
		}
		if v, err := a.Group.Get(ctx, keys[15]); err != nil || v.String() != "v:"+keys[15] {
			t.Fatalf("Get = %q, %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if src.count(1, keys[15]) == 0 {
		t.Fatal("b was never asked again after it restarted")
	}
	if s := a.Group.Stats(); s.Peers[0].Ejected {
		t.Fatalf("b is still ejected after answering: %+v", s.Peers)
	}
}

// Remove and Set toward a peer that hangs and one that lies (a 200 without
// the protocol's checksum): the call ends with the caller's deadline, and
// its UpdateError names both peers with their failures; nothing is left
// running (goleak).
func TestWritesToBadPeers(t *testing.T) {
	nodes := nethttptest.Start(t, 3, nil)
	a, hung, liar := nodes[0], nodes[1], nodes[2]
	hung.SetFault(nethttptest.Fault{Hang: true})
	liar.SetFault(nethttptest.Fault{Lie: true})
	// A key the liar owns, which answers at once (with a lie): the hung
	// peer, told beside it, is given its own share of the deadline.
	key := ownedBy(liar, "k", 1)[0]
	g := a.Group
	for name, write := range map[string]func(context.Context) error{
		"Remove": func(ctx context.Context) error { return g.Remove(ctx, key) },
		"Set":    func(ctx context.Context) error { return g.Set(ctx, key, []byte("631"), 0) },
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := write(ctx)
		cancel()
		var ue *cache.UpdateError
		if !errors.As(err, &ue) || len(ue.Failed) != 2 {
			t.Fatalf("%s: %v; want an UpdateError naming both peers", name, err)
		}
		if e := ue.Failed[hung.Addr]; !errors.Is(e, context.DeadlineExceeded) {
			t.Errorf("%s: the hung peer's failure is %v; want the caller's deadline", name, e)
		}
		if e := ue.Failed[liar.Addr]; !errors.Is(e, cache.ErrIntegrity) {
			t.Errorf("%s: the lying peer's failure is %v; want ErrIntegrity", name, e)
		}
	}
}
