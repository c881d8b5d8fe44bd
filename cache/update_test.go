package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// A slow load, then a Remove, then the load finishes: its waiter gets the
// old value, but the cache does not keep it, and the next Get reloads.
func TestRemoveDuringLoadDoesNotResurrect(t *testing.T) {
	var version atomic.Int64
	release := make(chan struct{})
	var loads atomic.Int64
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		n := loads.Add(1)
		v := fmt.Sprintf("v%d", version.Load())
		if n == 1 {
			<-release
		}
		return []byte(v), nil
	})
	g := newGroup(t, 1<<10, src)
	ctx := t.Context()
	first := make(chan string, 1)
	go func() { v, _ := g.Get(ctx, "k"); first <- v.String() }()
	testkit.WaitFor(t, "the slow load", func() bool { return loads.Load() == 1 })
	version.Store(1)
	if err := g.Remove(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	// A Get after the Remove does not join the old load.
	if v, err := g.Get(ctx, "k"); err != nil || v.String() != "v1" {
		t.Fatalf("Get after Remove = %q, %v; want the new v1", v, err)
	}
	close(release)
	if v := <-first; v != "v0" {
		t.Fatalf("the old load's waiter got %q, want v0", v)
	}
	if v, _ := g.Get(ctx, "k"); v.String() != "v1" {
		t.Fatalf("after the old load ended, Get = %q; want v1 (the old value must not come back)", v)
	}
	if loads.Load() != 2 {
		t.Fatalf("%d loads, want 2", loads.Load())
	}
}

// memNode is a node of an in-memory cluster whose peers call each other's
// groups directly.
type memNode struct {
	name    string
	group   *cache.Group
	reg     *cache.Registry // group's
	loads   atomic.Int64
	down    atomic.Bool
	writes  atomic.Int64 // requests to set or remove one key it received
	batches atomic.Int64 // the other requests it received: reads (of one key or many), removes of many keys, purges
	many    atomic.Int64 // requests of many keys (or of none: a purge) it received
	noBatch atomic.Bool  // refuses a request of many keys as a node of the previous version
	// batchTime, if set, is how long it takes to answer its nth request
	// of many keys (from 0): a node busy serving large batches.
	batchTime func(n int64) time.Duration

	mu      sync.Mutex
	stopped chan struct{} // not nil while the node is stopped (as by SIGSTOP)
}

// stop makes the node hang: each request waits until resume, or fails with
// its context's error when that ends first, as the request of a client
// that gave up would.
func (n *memNode) stop() {
	n.mu.Lock()
	n.stopped = make(chan struct{})
	n.mu.Unlock()
}

func (n *memNode) resume() {
	n.mu.Lock()
	close(n.stopped)
	n.stopped = nil
	n.mu.Unlock()
}

// serve waits while the node is stopped, and fails a request whose
// context has ended, as a transport does.
func (n *memNode) serve(ctx context.Context) error {
	n.mu.Lock()
	c := n.stopped
	n.mu.Unlock()
	if c != nil {
		select {
		case <-c:
		case <-ctx.Done():
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if n.down.Load() {
		return errors.New("down")
	}
	return nil
}

type memPeer struct{ n *memNode }

func (p memPeer) Addr() string { return p.n.name }

// Do serves req at p's node as a transport's server does, from the node's
// group alone (Registry.ServePeer). A request of many keys is a batch,
// which the node may be set to take long over (batchTime), or to refuse
// as a node of the previous version does (noBatch).
func (p memPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if req.Op == cache.OpSet || (req.Op == cache.OpRemove && len(req.Keys) == 1) {
		p.n.writes.Add(1)
	} else {
		p.n.batches.Add(1)
	}
	if len(req.Keys) != 1 {
		nth := p.n.many.Add(1) - 1
		if p.n.batchTime != nil {
			time.Sleep(p.n.batchTime(nth))
		}
		if p.n.noBatch.Load() {
			return fmt.Errorf("peer %s: no batches: %w", p.n.name, errors.ErrUnsupported)
		}
	}
	if err := p.n.serve(ctx); err != nil {
		return err
	}
	return serve(ctx, p.n.reg, req, reply)
}

// memPicker: key "a…" is owned by node 0, "b…" by node 1, "c…" by node 2.
type memPicker struct {
	self  int
	nodes []*memNode
}

func (m memPicker) PickPeer(key string) (cache.Peer, bool) {
	o := int(key[0]-'a') % len(m.nodes)
	return memPeer{m.nodes[o]}, o != m.self
}

func (m memPicker) ListPeers() []cache.Peer {
	var out []cache.Peer
	for i, n := range m.nodes {
		if i != m.self {
			out = append(out, memPeer{n})
		}
	}
	return out
}

func newMemCluster(t *testing.T, db *sync.Map) []*memNode {
	return newMemClusterWith(t, db, cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}})
}

// newMemClusterWith is newMemCluster with o for each group (Peers and
// Logger are set here).
func newMemClusterWith(t *testing.T, db *sync.Map, o cache.GroupOptions) []*memNode {
	nodes := make([]*memNode, 3)
	for i := range nodes {
		nodes[i] = &memNode{name: fmt.Sprintf("node%d", i)}
	}
	for i, n := range nodes {
		src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
			n.loads.Add(1)
			if v, ok := db.Load(key); ok {
				return []byte(v.(string)), nil
			}
			return nil, getter.ErrNotFound
		})
		o.Peers, o.Logger = memPicker{i, nodes}, quiet
		reg := cache.NewRegistry()
		g, err := reg.NewGroup("g", 1<<20, src, &o)
		if err != nil {
			t.Fatal(err)
		}
		n.group, n.reg = g, reg
	}
	return nodes
}

func TestRemoveAndSetReachEveryNode(t *testing.T) {
	var db sync.Map
	db.Store("b-key", "old")
	nodes := newMemCluster(t, &db)
	ctx := t.Context()
	readAll := func(want string) {
		t.Helper()
		for _, n := range nodes {
			if v, err := n.group.Get(ctx, "b-key"); err != nil || v.String() != want {
				t.Fatalf("%s: Get = %q, %v; want %q", n.name, v, err, want)
			}
		}
	}
	readAll("old") // cached at the owner (node1) and hot on the others
	db.Store("b-key", "new")
	for i, from := range nodes { // a Remove from any node
		before := nodes[1].loads.Load()
		if err := from.group.Remove(ctx, "b-key"); err != nil {
			t.Fatalf("Remove from node%d: %v", i, err)
		}
		readAll("new")
		if got := nodes[1].loads.Load() - before; got != 1 {
			t.Fatalf("after a Remove from node%d the source was read %d times; want once, at the owner", i, got)
		}
		for _, n := range []*memNode{nodes[0], nodes[2]} {
			if n.loads.Load() != 0 {
				t.Fatalf("%s loaded the key itself", n.name)
			}
		}
	}
	// Set from a node that does not own the key: stored at the owner,
	// dropped everywhere else, no source load.
	before := nodes[1].loads.Load()
	if err := nodes[2].group.Set(ctx, "b-key", []byte("set"), 0); err != nil {
		t.Fatal(err)
	}
	readAll("set")
	if nodes[1].loads.Load() != before {
		t.Fatal("Set made the owner load from the source")
	}
	// A node that is down is reported, by address.
	nodes[0].down.Store(true)
	err := nodes[2].group.Remove(ctx, "b-key")
	var ue *cache.UpdateError
	if !errors.As(err, &ue) || !errors.Is(err, cache.ErrPartialUpdate) || len(ue.Failed) != 1 || ue.Failed["node0"] == nil {
		t.Fatalf("Remove with node0 down: %v; want an UpdateError naming node0", err)
	}
}
