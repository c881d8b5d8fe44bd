//go:build !js

package nethttp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The owner's TTL travels as a remaining lifetime (the protocol's
// TestPeerWritesAndTTLs checks the header): a copy fetched 40 s into the
// owner's minute lives the 20 s left, not a minute of its own, and since the
// asker adds that lifetime to its own clock, how far its clock is from the
// owner's does not enter. In a synctest bubble (time is virtual), so the
// asker reaches the owner through an in-memory transport: a socket's wait is
// not one a bubble can see.
func TestCopyExpiresWithTheOwnersValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t.Cleanup(func() { // the groups' idle workers and clocks run out
			time.Sleep(time.Hour)
			synctest.Wait()
		})
		var loads atomic.Int64
		src := getter.TTLFunc(func(_ context.Context, key string) ([]byte, time.Duration, error) {
			loads.Add(1)
			return []byte("v:" + key), time.Minute, nil
		})
		quiet := slog.New(slog.DiscardHandler)
		const ownerAddr = "http://owner.test"
		groups := make([]*cache.Group, 2)
		var owner *Pool
		for i := range groups {
			reg := cache.NewRegistry()
			o := &PoolOptions{Logger: quiet}
			self := ownerAddr
			if i == 1 { // a client of the owner, which owns every key
				self, o.Transport = "", inMemory{owner}
			}
			pool, err := NewPool(self, reg, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = pool.Close() })
			mustSet(t, pool, ownerAddr)
			owner = pool
			g, err := reg.NewGroup("scores", 1<<20, src, &cache.GroupOptions{Peers: pool, Logger: quiet,
				PeerPolicy: cache.PeerPolicy{NoHedge: true}})
			if err != nil {
				t.Fatal(err)
			}
			groups[i] = g
		}
		ctx := t.Context()
		get := func(g *cache.Group) {
			t.Helper()
			if v, err := g.Get(ctx, "k"); err != nil || v.String() != "v:k" {
				t.Fatalf("Get = %q, %v", v, err)
			}
		}
		get(groups[0]) // the owner loads it, for a minute
		time.Sleep(40 * time.Second)
		get(groups[1]) // fetched, with 20 s to live
		time.Sleep(19 * time.Second)
		get(groups[1])
		if s := groups[1].Stats(); s.PeerLoads != 1 || loads.Load() != 1 {
			t.Fatalf("59 s after the owner's load: %d peer loads, %d source loads; want the copy still fresh", s.PeerLoads, loads.Load())
		}
		time.Sleep(2 * time.Second)
		get(groups[1])
		if s := groups[1].Stats(); s.PeerLoads != 2 || loads.Load() != 2 {
			t.Fatalf("61 s after the owner's load: %d peer loads, %d source loads; want the copy expired with the owner's value", s.PeerLoads, loads.Load())
		}
	})
}

// inMemory is a transport that serves each request with h, in the
// caller's goroutine: no socket, so it works in a synctest bubble. The
// handler's informational answers (its signs of life during a load) are
// dropped: the final answer is the response.
type inMemory struct{ h http.Handler }

func (m inMemory) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := finalOnly{httptest.NewRecorder()}
	m.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// finalOnly is a recorder that ignores 1xx status codes.
type finalOnly struct{ *httptest.ResponseRecorder }

func (f finalOnly) WriteHeader(code int) {
	if code >= 200 {
		f.ResponseRecorder.WriteHeader(code)
	}
}
