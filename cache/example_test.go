package cache_test

import (
	"context"
	"fmt"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

func ExampleGroup_Get() {
	db := map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"}
	loads := 0
	src := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		loads++
		return getter.Map(db).Get(ctx, key)
	})

	node := cache.NewRegistry() // one registry per node; no globals
	scores, err := node.NewGroup("scores", 64<<20, src, nil)
	if err != nil {
		panic(err)
	}
	for range 3 {
		v, _ := scores.Get(context.Background(), "Tom")
		fmt.Println(v)
	}
	_, err = scores.Get(context.Background(), "kkk")
	fmt.Println(err)
	fmt.Println("loads:", loads, "hits:", scores.Stats().Hits)
	// Output:
	// 630
	// 630
	// 630
	// geecache: group "scores", key "kkk": key not found
	// loads: 2 hits: 2
}
