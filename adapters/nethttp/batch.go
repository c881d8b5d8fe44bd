package nethttp

import (
	"context"
	"fmt"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// Batch sends keys of group to the peer in batch requests (a POST each,
// split over the protocol's limits: 1,000 keys or 1 MiB of keys), for
// Group.GetMany, Group.RemoveMany and Group.Purge; see cache.PeerGetter.
// A peer of the previous protocol version answers 405, returned as an
// error wrapping errors.ErrUnsupported, so that the group asks key by key.
// Each request ends when ctx does, or after the client's timeout, and an
// answer is read up to a bound made from the size limit and the keys.
func (c *Client) Batch(ctx context.Context, group string, keys []string, remove bool, each func(i int, value []byte, ttl time.Duration, err error)) error {
	return protocol.SendBatch(ctx, keys, remove, each,
		func(op protocol.BatchOp, keys []string, each func(int, []byte, time.Duration, error)) error {
			return c.batch(ctx, group, op, keys, each)
		},
		func(key string) error { return c.Remove(ctx, group, key) })
}

// batch sends one batch request and reads its answer.
func (c *Client) batch(ctx context.Context, group string, op protocol.BatchOp, keys []string, each func(int, []byte, time.Duration, error)) error {
	cancel := context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.timeout {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	defer cancel()
	preq := c.proto.NewBatchRequest(ctx, c.addr, group, op, keys)
	resp, err := c.roundTrip(ctx, preq, op == protocol.BatchGet) // the owner's 102: it is loading keys of the batch
	if err != nil {
		return fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	err = c.proto.ReadBatchResponse(ctx, preq, resp.status, resp.header, resp.size, resp.body, keys, each)
	cancel()
	_ = resp.body.Close()
	if err != nil {
		return fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	return nil
}
