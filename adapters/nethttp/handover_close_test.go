//go:build !js

package nethttp_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
)

// Close may be called while another goroutine calls Set: each Set that
// changes the ring starts a handover, which a Close cancels and waits
// for. Each round starts a handover that lasts until it is cancelled (to
// a node that hangs on every offer), so that Close has one to wait for,
// and calls Close while ring changes go on whose handovers end at once
// (their receiver is down), so that handovers start while Close waits
// and just after it woke. Under -race this fails if starting a handover
// is not ordered with Close's wait for them (a sync.WaitGroup's Add
// concurrent with its Wait); that misuse also makes Close panic now and
// then, with or without -race.
func TestCloseWhileSetStartsHandovers(t *testing.T) {
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
	if err := a.Pool.Close(); err != nil { // the last Set's handover
		t.Fatal(err)
	}
	hung.SetFault(nethttptest.Fault{})
	down.SetFault(nethttptest.Fault{})
}
