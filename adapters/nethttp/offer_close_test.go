//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Close may be called while another goroutine calls Set: each Set that
// changes the ring starts an offer, which a Close cancels and waits
// for. Each round starts an offer that lasts until it is cancelled (to
// a node that hangs on every offer), so that Close has one to wait for,
// and calls Close while ring changes go on whose offers end at once
// (their receiver is down), so that offers start while Close waits
// and just after it woke. Under -race this fails if starting an offer
// is not ordered with Close's wait for them (a sync.WaitGroup's Add
// concurrent with its Wait); that misuse also makes Close panic now and
// then, with or without -race.
func TestCloseWhileSetStartsOffers(t *testing.T) {
	nodes := nethttptest.Start(t, 3, &nethttptest.Options{
		PoolOptions:  nethttp.PoolOptions{DrainFor: time.Hour, Timeout: time.Hour},
		GroupOptions: cache.GroupOptions{PeerPolicy: cache.PeerPolicy{NoHedge: true}}})
	a, hung, down := nodes[0], nodes[1], nodes[2]
	if err := a.Pool.Set(a.Addr); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := a.Group.Get(context.Background(), fmt.Sprint("key-", i)); err != nil {
			t.Fatal(err)
		}
	}
	hung.SetFault(nethttptest.Fault{Hang: true})
	down.SetFault(nethttptest.Fault{Down: true})
	set := func(addrs ...string) {
		t.Helper()
		if err := a.Pool.Set(addrs...); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		set(a.Addr, hung.Addr)
		var wg sync.WaitGroup
		wg.Go(func() { _ = a.Pool.Close() })
		for range 20 {
			set(a.Addr, down.Addr)
			set(a.Addr)
		}
		wg.Wait()
	}
	if err := a.Pool.Close(); err != nil { // the last Set's offer
		t.Fatal(err)
	}
	hung.SetFault(nethttptest.Fault{})
	down.SetFault(nethttptest.Fault{})
}

// Close does not stop a Drain's offer: with an offer of the leaving
// node held by its receiver, Close returns (it does not wait for that
// offer either), and once the receiver answers, the offer counts as
// offered; Drain goes on draining until its context ends.
func TestCloseLeavesDrainsOffer(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	rt := nethttp.NewTransport()
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	holdOffer := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.EscapedPath(), "/!offer") {
				once.Do(func() { close(arrived) })
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	type node struct {
		addr string
		ln   net.Listener
		pool *nethttp.Pool
		g    *cache.Group
	}
	var a, b node
	for _, n := range []*node{&a, &b} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		n.ln, n.addr = ln, "http://"+ln.Addr().String()
	}
	for _, n := range []*node{&a, &b} {
		reg := cache.NewRegistry()
		var err error
		if n.pool, err = nethttp.NewPool(n.addr, reg, &nethttp.PoolOptions{Transport: rt, DrainFor: time.Hour, Logger: quiet}); err != nil {
			t.Fatal(err)
		}
		if err := n.pool.Set(a.addr, b.addr); err != nil {
			t.Fatal(err)
		}
		src := getter.Func(func(_ context.Context, key string) ([]byte, error) { return []byte("v:" + key), nil })
		if n.g, err = reg.NewGroup("scores", 1<<20, src, &cache.GroupOptions{Peers: n.pool, Logger: quiet,
			PeerPolicy: cache.PeerPolicy{NoHedge: true}}); err != nil {
			t.Fatal(err)
		}
		var h http.Handler = n.pool
		if n == &b {
			h = holdOffer(h)
		}
		srv := &http.Server{Handler: h}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = srv.Serve(n.ln)
		}()
		t.Cleanup(func() {
			_ = srv.Close()
			<-done
			_ = n.pool.Close()
			rt.CloseIdleConnections()
		})
	}
	var keys []string
	for i := 0; len(keys) < 20; i++ {
		if k := fmt.Sprint("key-", i); a.pool.Owner(k) == a.addr {
			keys = append(keys, k)
			if _, err := a.g.Get(context.Background(), k); err != nil {
				t.Fatal(err)
			}
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- a.pool.Drain(ctx) }()
	<-arrived // Drain's offer offers a's keys to b, which holds the offer
	if err := a.pool.Close(); err != nil {
		t.Fatal(err)
	}
	close(release)
	if !waitFor(func() bool { return a.g.Stats().Offered == int64(len(keys)) }) {
		t.Errorf("offered %d keys after Close; want the %d of the offer Close left running", a.g.Stats().Offered, len(keys))
	}
	select {
	case err := <-shut:
		t.Fatalf("Drain returned %v before its context ended; want its drain still going on", err)
	default:
	}
	cancel()
	if err := <-shut; !errors.Is(err, context.Canceled) {
		t.Errorf("Drain = %v; want its drain cut short by its context", err)
	}
}
