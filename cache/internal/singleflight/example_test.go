package singleflight_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/geecache/geecache/cache/internal/singleflight"
)

func Example() {
	var g singleflight.Group[string, struct{}]
	var loads atomic.Int32
	release := make(chan struct{})
	load := func(ctx context.Context) (string, error) {
		loads.Add(1)
		<-release
		return "630", nil
	}
	var wg sync.WaitGroup
	results := make([]string, 3)
	for i := range results {
		wg.Go(func() {
			results[i], _ = g.Do(context.Background(), "Tom", load)
		})
	}
	// Wait (a bounded while) until all three share the one load.
	for i := 0; g.Joins() < 2 && i < 10_000_000; i++ {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	fmt.Println(results, loads.Load())
	// Output: [630 630 630] 1
}
