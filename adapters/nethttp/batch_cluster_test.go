//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// counting counts the requests of each method that go through it.
type counting struct {
	rt          http.RoundTripper
	posts, gets atomic.Int64
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.Method {
	case http.MethodPost:
		c.posts.Add(1)
	case http.MethodGet:
		// A memory-only request is a new owner asking the ring's
		// previous one (the nodes have just started), not a Get.
		if r.Header.Get("X-Geecache-Peer") != "memory" {
			c.gets.Add(1)
		}
	}
	return c.rt.RoundTrip(r)
}

// Over net/http, in a cluster with a secret: GetMany of keys spread over
// three nodes sends one signed batch to each other owner, and gets every
// value (and the missing key as not found); RemoveMany and Purge reach
// every node, one signed request each.
func TestBatchOverHTTP(t *testing.T) {
	rt := &counting{rt: nethttp.NewTransport()}
	t.Cleanup(func() { rt.rt.(*http.Transport).CloseIdleConnections() })
	nodes := nethttptest.Start(t, 3, &nethttptest.Options{PoolOptions: nethttp.PoolOptions{
		Cluster: nethttp.Cluster{Secret: []byte("batch secret")}, Transport: rt}})
	keys := []string{"missing-1"}
	for i := range 60 {
		keys = append(keys, fmt.Sprint("key-", i))
	}
	owners := map[*nethttptest.Node]bool{}
	for _, k := range keys {
		if o := nodes[0].Owner(k); o != nodes[0] {
			owners[o] = true
		}
	}
	ctx := t.Context()
	check := func(g *cache.Group) {
		t.Helper()
		g.GetMany(ctx, keys, func(i int, v cache.ByteView, err error) {
			k := keys[i]
			switch {
			case k == "missing-1":
				if !errors.Is(err, getter.ErrNotFound) || err.Error() == "" {
					t.Errorf("%s: %q, %v; want not found", k, v, err)
				}
			case err != nil || v.String() != "v:"+k:
				t.Errorf("%s: %q, %v; want %q", k, v, err, "v:"+k)
			}
		})
	}
	check(nodes[0].Group)
	if n := rt.posts.Load(); n != int64(len(owners)) || rt.gets.Load() != 0 {
		t.Fatalf("GetMany sent %d batches and %d Gets; want %d batches (one per other owner) and no Get", n, rt.gets.Load(), len(owners))
	}
	check(nodes[0].Group) // from memory now, but the missing key (not cached)
	if n := rt.posts.Load(); n > int64(2*len(owners)) {
		t.Fatalf("%d batches after a second GetMany", n)
	}

	rt.posts.Store(0)
	if err := nodes[0].Group.RemoveMany(ctx, keys); err != nil {
		t.Fatalf("RemoveMany: %v", err)
	}
	if n := rt.posts.Load(); n != 4 {
		t.Fatalf("RemoveMany sent %d requests; want 4: one per peer (each owns some of the keys), and one more to each once both have confirmed", n)
	}
	check(nodes[1].Group)
	rt.posts.Store(0)
	if err := nodes[0].Group.Purge(ctx); err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if n := rt.posts.Load(); n != 4 {
		t.Fatalf("Purge sent %d requests; want 4: one per peer, and one more to each once both have confirmed", n)
	}
	for _, n := range nodes {
		if s := n.Group.Stats(); s.Main.Items+s.Hot.Items != 0 {
			t.Fatalf("%s holds %d entries after Purge", n.Addr, s.Main.Items+s.Hot.Items)
		}
	}
}

// Without a secret, a node refuses a batch that changes keys (RemoveMany,
// Purge) unless it takes unsigned writes; a batch of reads it serves.
func TestBatchWritesNeedASecret(t *testing.T) {
	nodes := nethttptest.Start(t, 2, nil)
	keys := []string{"a", "b", "c", "d"}
	nodes[0].Group.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
		if err != nil || v.String() != "v:"+keys[i] {
			t.Errorf("%s: %q, %v", keys[i], v, err)
		}
	})
	var ue *cache.UpdateError
	if err := nodes[0].Group.Purge(t.Context()); !errors.As(err, &ue) || len(ue.Failed) != 1 {
		t.Fatalf("an unsigned Purge = %v; want the peer named", err)
	}
}

// Values that do not fit a batch's answer within the size limit are
// answered "ask alone", and the asking node gets them with single Gets:
// every value right, the answer never over the limit.
func TestBatchOverTheSizeLimitAsksAlone(t *testing.T) {
	rt := &counting{rt: nethttp.NewTransport()}
	t.Cleanup(func() { rt.rt.(*http.Transport).CloseIdleConnections() })
	big := func(k string) []byte { return []byte(strings.Repeat(k, 300/len(k))) }
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{
		Getter: func(int) getter.Getter {
			return getter.Func(func(_ context.Context, k string) ([]byte, error) { return big(k), nil })
		},
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}, // the test counts local loads
		PoolOptions:  nethttp.PoolOptions{Cluster: nethttp.Cluster{MaxValueBytes: 1000}, Transport: rt}})
	var keys []string
	for i := 0; len(keys) < 6; i++ {
		if k := fmt.Sprint("k", i); nodes[0].Owner(k) == nodes[1] {
			keys = append(keys, k)
		}
	}
	nodes[0].Group.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
		if err != nil || !v.EqualBytes(big(keys[i])) {
			t.Errorf("%s: %d bytes, %v", keys[i], v.Len(), err)
		}
	})
	if rt.posts.Load() != 1 || rt.gets.Load() < 3 {
		t.Fatalf("%d batches and %d Gets; want 1 batch (3 values fit in 1000 bytes at most), then Gets for the rest", rt.posts.Load(), rt.gets.Load())
	}
	if s := nodes[0].Group.Stats(); s.FallbackLoads != 0 || s.LocalLoads != 0 {
		t.Fatalf("the asking node loaded for itself (the answer was refused?): %+v", s)
	}
}
