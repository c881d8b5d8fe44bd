//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Two nodes on loopback ports the OS picks; each key is loaded by its owner
// only, and node 0 reaches node 1's keys over HTTP.
func Example() {
	db := getter.Map(map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"})
	quiet := slog.New(slog.DiscardHandler)
	var nodes []*nethttp.Node
	var groups []*cache.Group
	for range 2 {
		reg := cache.NewRegistry()
		node, err := nethttp.Listen("127.0.0.1:0", reg, &nethttp.NodeOptions{Pool: nethttp.PoolOptions{Logger: quiet}})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer node.Close() // at once: no drain
		g, err := reg.NewGroup("scores", 1<<20, db, &cache.GroupOptions{Peers: node.Pool(), Logger: quiet})
		if err != nil {
			fmt.Println(err)
			return
		}
		nodes, groups = append(nodes, node), append(groups, g)
	}
	for _, n := range nodes {
		if err := n.Pool().Set(nodes[0].URL(), nodes[1].URL()); err != nil {
			fmt.Println(err)
			return
		}
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
