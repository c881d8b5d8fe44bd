package cache_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geecache/geecache/cache"

	"github.com/geecache/geecache/internal/batchctx"
)

// Batch serves a batch as a transport's server does: from the node's
// group alone, with each key's remaining lifetime.
func (p memPeer) Batch(ctx context.Context, _ string, keys []string, remove bool, each func(int, []byte, time.Duration, error)) error {
	nth := p.n.batches.Add(1) - 1
	if p.n.batchTime != nil {
		time.Sleep(p.n.batchTime(nth))
	}
	if p.n.noBatch.Load() {
		return fmt.Errorf("peer %s: no batches: %w", p.n.name, errors.ErrUnsupported)
	}
	if err := p.n.serve(ctx); err != nil {
		return err
	}
	switch {
	case remove && len(keys) == 0:
		return p.n.group.Purge(batchctx.With(ctx, &batchctx.Local{}))
	case remove:
		return p.n.group.RemoveMany(batchctx.With(ctx, &batchctx.Local{}), keys)
	}
	var ttl time.Duration
	local := &batchctx.Local{TTL: func(_ int, d time.Duration) { ttl = d }}
	p.n.group.GetMany(batchctx.With(ctx, local), keys, func(i int, v cache.ByteView, err error) {
		if err != nil { // (errors.As allocates: only on an error, as a transport)
			var ce *cache.Error
			if errors.As(err, &ce) {
				err = ce.Err
			}
		}
		each(i, v.ByteSlice(), ttl, err)
	})
	return nil
}
