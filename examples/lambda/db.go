//go:build !js

package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/geecache/geecache/getter"
)

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
