//go:build !js

package nethttp_test

import (
	"context"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
)

// Stopping a node at once does not drain it, however long its drain is:
// with DrainFor an hour, the Pool's Close and the Server's Close and
// Shutdown return (were any of them to drain, the test would run into its
// timeout), and the node offers none of its keys, which a drain would.
func TestStopAtOnceDoesNotDrain(t *testing.T) {
	nodes := nethttptest.Start(t, 2, &nethttptest.Options{PoolOptions: nethttp.PoolOptions{DrainFor: time.Hour}})
	ctx := context.Background()
	held := ownedBy(nodes[1], "key-", 20)
	for _, k := range held {
		if v, err := nodes[0].Group.Get(ctx, k); err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%s) = %q, %v", k, v, err)
		}
	}
	if err := nodes[1].Pool.Close(); err != nil {
		t.Fatalf("Pool.Close = %v", err)
	}
	if s := nodes[1].Group.Stats(); s.Offered != 0 {
		t.Errorf("Close offered %d keys; want none (it does not drain)", s.Offered)
	}

	for _, shutdown := range []bool{false, true} {
		srv := nethttp.NewServer("127.0.0.1:0", nodes[0].Pool, nil)
		done := make(chan error, 1)
		go func() { done <- srv.ListenAndServe() }()
		var err error
		if shutdown {
			err = srv.Shutdown(ctx)
		} else {
			err = srv.Close()
		}
		if err != nil {
			t.Errorf("Server stop (Shutdown: %v) = %v", shutdown, err)
		}
		<-done
	}
	if s := nodes[0].Group.Stats(); s.Offered != 0 {
		t.Errorf("the Server's Close and Shutdown offered %d keys; want none", s.Offered)
	}
}
