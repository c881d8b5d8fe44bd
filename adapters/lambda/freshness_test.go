//go:build !js

package lambda

import (
	"context"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A mixed cluster, a Lambda node behind a Function URL stand-in and a
// net/http node, with a secret: a Set and a Remove from either node reach
// the other, through PUT and DELETE, and TTLs travel both ways.
func TestRemoveAndSetInAMixedCluster(t *testing.T) {
	const secret = "k"
	lambdaLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	urls := []string{"http://" + lambdaLn.Addr().String(), "http://" + httpLn.Addr().String()}
	var loads [2]atomic.Int64
	src := func(i int) getter.Getter {
		return getter.TTLFunc(func(ctx context.Context, key string) ([]byte, time.Duration, error) {
			loads[i].Add(1)
			return []byte("src:" + key), time.Hour, nil
		})
	}
	quiet := slog.New(slog.DiscardHandler)
	noHedge := cache.PeerPolicy{NoHedge: true} // the test counts who loads a key

	var lambdaGroup *cache.Group
	cfg := Config{SelfURL: urls[0], Peers: urls, Cluster: nethttp.Cluster{Secret: []byte(secret)}}
	n, err := NewNode(cfg, func(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error {
		lambdaGroup, err = reg.NewGroup("scores", 1<<20, src(0), &cache.GroupOptions{Peers: peers, Logger: quiet, PeerPolicy: noHedge})
		return err
	}, &Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	serveNode(t, lambdaLn, n)

	reg := cache.NewRegistry()
	pool, err := nethttp.NewPool(urls[1], reg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte(secret), MaxValueBytes: maxValueBytes}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Set(urls...); err != nil {
		t.Fatal(err)
	}
	httpGroup, err := reg.NewGroup("scores", 1<<20, src(1), &cache.GroupOptions{Peers: pool, Logger: quiet, PeerPolicy: noHedge})
	if err != nil {
		t.Fatal(err)
	}
	srv := nethttp.NewServer("", pool, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(httpLn) }()
	t.Cleanup(func() { _ = srv.Close(); <-done; _ = pool.Close() })

	// A key of each owner.
	var keys [2]string
	for i := 0; keys[0] == "" || keys[1] == ""; i++ {
		k := "key-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if o := pool.Owner(k); o == urls[0] && keys[0] == "" {
			keys[0] = k
		} else if o == urls[1] && keys[1] == "" {
			keys[1] = k
		}
	}
	groups := []*cache.Group{lambdaGroup, httpGroup}
	ctx := t.Context()
	readAll := func(key, want string) {
		t.Helper()
		for i, g := range groups {
			if v, err := g.Get(ctx, key); err != nil || v.String() != want {
				t.Fatalf("node %d: Get(%q) = %q, %v; want %q", i, key, v, err, want)
			}
		}
	}
	for owner, key := range keys {
		other := 1 - owner
		otherBefore := loads[other].Load()
		readAll(key, "src:"+key)
		for from, g := range groups {
			if err := g.Set(ctx, key, []byte("set"), 0); err != nil {
				t.Fatalf("Set of node %d's key from node %d: %v", owner, from, err)
			}
			readAll(key, "set")
			before := loads[owner].Load()
			if err := g.Remove(ctx, key); err != nil {
				t.Fatalf("Remove of node %d's key from node %d: %v", owner, from, err)
			}
			readAll(key, "src:"+key)
			if got := loads[owner].Load() - before; got != 1 {
				t.Fatalf("after a Remove from node %d the owner loaded %d times; want 1", from, got)
			}
		}
		if loads[other].Load() != otherBefore {
			t.Fatalf("node %d loaded a key it does not own: %+v", other, groups[other].Stats())
		}
	}
	// The owner's TTL came with the copies: each hot copy expires.
	for i, g := range groups {
		if s := g.Stats(); s.Hot.Items != 1 {
			t.Fatalf("node %d: %d hot items; want the other node's key", i, s.Hot.Items)
		}
	}
}
