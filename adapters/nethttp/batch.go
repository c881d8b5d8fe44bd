package nethttp

import (
	"context"
	"fmt"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// batch sends one batch request and reads its answer.
func (c *Client) batch(ctx context.Context, group string, op protocol.BatchOp, keys []string, peek bool, loading protocol.Listener, each func(int, []byte, time.Duration, error)) error {
	cancel := context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.timeout {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	defer cancel()
	preq := c.proto.NewBatchRequest(ctx, c.addr, group, op, keys, peek)
	resp, err := c.roundTrip(ctx, preq, loading) // the owner's 102: it is loading keys of the batch
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
