//go:build !js

package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/geecache/geecache/getter"
)

// scores is the tutorial's data (Tom, Jack, Sam), with two more scores
// (Ben, Leo), so that the keys spread over more nodes.
var scores = map[string]string{"Tom": "630", "Jack": "589", "Sam": "567", "Ben": "582", "Leo": "604"}

// scoresDB is the tutorial's slow database: each load takes 20 ms and logs
// "[SlowDB] search key" with the node's name, so the cost of a miss, and
// the node that paid it, are visible in the function's logs (CloudWatch,
// or the emulator's output locally).
func scoresDB(node string, log *slog.Logger) getter.Getter {
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		log.InfoContext(ctx, "[SlowDB] search key", "group", "scores", "node", node, "key", key)
		t := time.NewTimer(20 * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		v, ok := scores[key]
		if !ok {
			return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
		}
		return []byte(v), nil
	})
}

// blobStore serves binary values, to show that values are bytes, not text:
// key "all-bytes" holds every byte value 0..255 once. Each load is logged
// with the name of the node (see nodeName).
func blobStore(node string, log *slog.Logger) getter.Getter {
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		log.InfoContext(ctx, "[SlowDB] search key", "group", "blobs", "node", node, "key", key)
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
