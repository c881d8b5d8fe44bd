package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// alone is a PeerPicker for a node without peers: it owns every key.
type alone struct{}

func (alone) PickPeer(string) (cache.PeerGetter, bool) { return nil, false }

// The node's groups answer the seed's queries.
func Example() {
	reg := cache.NewRegistry()
	if err := addGroups(reg, 1<<20, alone{}, slog.New(slog.DiscardHandler)); err != nil {
		panic(err)
	}
	ctx := context.Background()
	v, err := reg.Lookup("scores").Get(ctx, "Tom")
	fmt.Println(v.String(), err)
	_, err = reg.Lookup("scores").Get(ctx, "kkk")
	fmt.Println(errors.Is(err, getter.ErrNotFound))
	b, _ := reg.Lookup("blobs").Get(ctx, "all-bytes")
	fmt.Println(b.Len(), b.At(0), b.At(255))
	// Output:
	// 630 <nil>
	// true
	// 256 0 255
}
