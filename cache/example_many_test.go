package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// GetMany answers many keys in one call, each with its own value or error:
// a missing key is "not found" for itself alone. In a cluster, the keys
// each other node owns are asked from it in one request.
func ExampleGroup_GetMany() {
	db := map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"}
	var loads atomic.Int64 // the keys load concurrently
	src := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		loads.Add(1)
		return getter.Map(db).Get(ctx, key)
	})
	scores, err := cache.NewRegistry().NewGroup("scores", 64<<20, src, nil)
	if err != nil {
		panic(err)
	}
	keys := []string{"Tom", "Jack", "kkk", "Sam"}
	for range 2 {
		scores.GetMany(context.Background(), keys, func(i int, v cache.ByteView, err error) {
			switch {
			case errors.Is(err, getter.ErrNotFound):
				fmt.Println(keys[i], "not exist")
			case err != nil:
				fmt.Println(keys[i], "error:", err)
			default:
				fmt.Println(keys[i], v)
			}
		})
	}
	fmt.Println("loads:", loads.Load())
	// Output:
	// Tom 630
	// Jack 589
	// kkk not exist
	// Sam 567
	// Tom 630
	// Jack 589
	// kkk not exist
	// Sam 567
	// loads: 5
}
