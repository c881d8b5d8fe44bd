package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/geecache/geecache/getter"
)

// slowDB is the seed's database of scores, slow to answer, as a Getter.
// Every load logs "[SlowDB] search key", so the cost of a miss is visible
// in the function's logs (CloudWatch, or the emulator's output locally).
func slowDB(log *slog.Logger) getter.Getter {
	db := map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"}
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		log.InfoContext(ctx, "[SlowDB] search key", "group", "scores", "key", key)
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if v, ok := db[key]; ok {
			return []byte(v), nil
		}
		return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
	})
}

// blobStore serves binary values, to show that values are bytes, not text:
// key "all-bytes" holds every byte value 0..255 once.
func blobStore(log *slog.Logger) getter.Getter {
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		log.InfoContext(ctx, "[SlowDB] search key", "group", "blobs", "key", key)
		if key != "all-bytes" {
			return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
		}
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(i)
		}
		return b, nil
	})
}
