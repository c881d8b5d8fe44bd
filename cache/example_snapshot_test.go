package cache_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A node restarted in place writes its memory before it exits and reads
// it back when it starts, so that it does not load again every key it
// held. A real node writes a file (to a temporary name, then renamed) once
// its server has shut down, and reads it before it serves.
func ExampleGroup_Snapshot() {
	loads := 0
	src := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		loads++
		return []byte("value of " + key), nil
	})
	ctx := context.Background()

	before, _ := cache.NewRegistry().NewGroup("pages", 64<<20, src, nil)
	for _, key := range []string{"a", "b", "c"} {
		_, _ = before.Get(ctx, key)
	}
	var file bytes.Buffer // os.Create in a real node
	n, err := before.Snapshot(ctx, &file)
	fmt.Println("written:", n, err)

	after, _ := cache.NewRegistry().NewGroup("pages", 64<<20, src, nil) // the restarted process
	n, err = after.Restore(ctx, &file)
	fmt.Println("restored:", n, err)
	v, _ := after.Get(ctx, "b")
	fmt.Println(v, "- loads:", loads)
	// Output:
	// written: 3 <nil>
	// restored: 3 <nil>
	// value of b - loads: 3
}
