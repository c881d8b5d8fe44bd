//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Two nodes on loopback ports the OS picks; each key is loaded by its owner
// only, and node 0 reaches node 1's keys over HTTP.
func Example() {
	db := getter.Map(map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"})
	var lns []net.Listener
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println(err)
			return
		}
		lns = append(lns, ln)
		addrs = append(addrs, "http://"+ln.Addr().String())
	}
	var groups []*cache.Group
	for i, ln := range lns {
		reg := cache.NewRegistry()
		pool, err := nethttp.NewPool(addrs[i], reg, &nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer pool.Close()
		if err := pool.Set(addrs...); err != nil {
			fmt.Println(err)
			return
		}
		g, err := reg.NewGroup("scores", 1<<20, db, &cache.GroupOptions{Peers: pool, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			fmt.Println(err)
			return
		}
		groups = append(groups, g)
		srv := nethttp.NewServer("", pool, nil)
		go srv.Serve(ln)
		defer srv.Close()
	}
	for _, key := range []string{"Tom", "Jack", "Sam", "kkk"} {
		v, err := groups[0].Get(context.Background(), key)
		fmt.Printf("%s=%s not found: %v\n", key, v.String(), errors.Is(err, getter.ErrNotFound))
	}
	// Output:
	// Tom=630 not found: false
	// Jack=589 not found: false
	// Sam=567 not found: false
	// kkk= not found: true
}
