package cache_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/history"
	"github.com/geecache/geecache/picker"
)

// A gate holds the first call that passes it while armed, until release.
type gate struct {
	mu      sync.Mutex
	armed   bool
	release chan struct{}
}

func (g *gate) arm() {
	g.mu.Lock()
	g.armed, g.release = true, make(chan struct{})
	g.mu.Unlock()
}

func (g *gate) pass() {
	g.mu.Lock()
	held := g.armed
	g.armed = false
	c := g.release
	g.mu.Unlock()
	if held {
		<-c
	}
}

func (g *gate) open() { close(g.release) }

// A gatedPeer is hPeer with a gate on its fetches (after the peer has
// answered: the answer is on its way), one on its purges and one on its
// Removes (before the peer takes either); while down, its fetches fail.
type gatedPeer struct {
	hPeer
	fetch, purge, remove gate
	down                 atomic.Bool
}

func (p *gatedPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	one := len(req.Keys) == 1
	switch {
	case (req.Op == cache.OpGet || req.Op == cache.OpPeek) && one:
		if p.down.Load() {
			return errors.New("down")
		}
		err := p.hPeer.Do(ctx, req, reply)
		p.fetch.pass()
		return err
	case req.Op == cache.OpRemove && one:
		p.remove.pass()
	case req.Op == cache.OpPurge:
		p.purge.pass()
	}
	return p.hPeer.Do(ctx, req, reply)
}

// newGatedCluster starts in-process nodes of addrs on src, whose peers are
// gatedPeers: peer[from][to] is node from's getter of node to.
func newGatedCluster(t *testing.T, src *history.Source, policy cache.PeerPolicy, addrs ...string) (map[string]*hNode, map[string]map[string]*gatedPeer) {
	nodes := map[string]*hNode{}
	for _, a := range addrs {
		nodes[a] = &hNode{addr: a}
	}
	peer := map[string]map[string]*gatedPeer{}
	for _, from := range addrs {
		peer[from] = map[string]*gatedPeer{}
		ps, err := picker.NewPeers(from, func(to string) cache.Peer {
			gp := &gatedPeer{hPeer: hPeer{nodes[to]}}
			peer[from][to] = gp
			return gp
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ps.Set(addrs...); err != nil {
			t.Fatal(err)
		}
		nodes[from].peers = ps
		reg := cache.NewRegistry()
		g, err := reg.NewGroup("g", 1<<20, getter.Func(src.Get),
			&cache.GroupOptions{Peers: ps, Logger: quiet, PeerPolicy: policy})
		if err != nil {
			t.Fatal(err)
		}
		nodes[from].reg.Store(reg)
		nodes[from].group.Store(g)
	}
	return nodes, peer
}

// A Purge that reaches a node before the owner of a key is not undone by
// a fetch that node starts in between: the fetch gets the owner's value
// from before the purge, and a Get that comes after the Purge returned
// must not join it. Nodes p, x and o; o owns the key, whose value is in
// the cache only (a Set); p purges, and its purge reaches x, then o.
func TestPurgeIsNotUndoneByAFetchBetweenItsPeers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keys := historyKeys(64)
		src := history.NewSource(keys)
		nodes, peer := newGatedCluster(t, src, cache.PeerPolicy{NoHedge: true}, "p", "x", "o")
		key := ""
		for _, k := range keys {
			if nodes["p"].peers.Owner(k) == "o" {
				key = k
				break
			}
		}
		if key == "" {
			t.Fatal("o owns no key")
		}
		ctx := context.Background()
		p, x := nodes["p"].group.Load(), nodes["x"].group.Load()
		if err := p.Set(ctx, key, []byte("before"), 0); err != nil {
			t.Fatal(err)
		}

		peer["p"]["o"].purge.arm()
		purged := make(chan error, 1)
		go func() { purged <- p.Purge(ctx) }()
		synctest.Wait() // p and x have purged; o's purge is held

		peer["x"]["o"].fetch.arm()
		go func() { _, _ = x.Get(ctx, key) }() // began before the Purge returned: it may read anything
		synctest.Wait()                        // its fetch has o's value from before the purge, on its way

		peer["p"]["o"].purge.open()
		if err := <-purged; err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			v, err := x.Get(ctx, key)
			if err != nil {
				t.Error(err)
			}
			got <- v.String()
		}()
		synctest.Wait()
		peer["x"]["o"].fetch.open()
		if v, want := <-got, history.Initial(key); v != want {
			t.Errorf("a Get after the Purge returned %q; want %q (the source's: the Purge dropped the Set's)", v, want)
		}
		time.Sleep(time.Minute) // the groups' workers end when idle
	})
}
