package nethttp

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/internal/progress"
)

// Batch sends keys of group to the peer in batch requests (a POST each,
// split over the protocol's limits: 1,000 keys or 1 MiB of keys), for
// Group.GetMany, Group.RemoveMany and Group.Purge; see cache.PeerGetter.
// A peer of the previous protocol version answers 405, returned as an
// error wrapping errors.ErrUnsupported, so that the group asks key by key.
// Each request ends when ctx does, or after the client's timeout, and an
// answer is read up to a bound made from the size limit and the keys.
func (c *Client) Batch(ctx context.Context, group string, keys []string, remove bool, each func(i int, value []byte, ttl time.Duration, err error)) error {
	return protocol.SendBatch(keys, remove, each,
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
	rctx := ctx
	if op == protocol.BatchGet && progress.Wanted(ctx) {
		rctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
			if code == http.StatusProcessing {
				progress.Report(ctx) // the owner is loading keys of the batch
			}
			return nil
		}})
	}
	req, err := http.NewRequestWithContext(rctx, preq.Method, c.prefix+preq.Path, bytes.NewReader(preq.Body))
	if err != nil {
		return fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	req.Header = preq.Header
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	err = c.proto.ReadBatchResponse(ctx, preq, resp.StatusCode, resp.Header, resp.ContentLength, resp.Body, keys, each)
	cancel()
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("geecache: peer %s: %w", c.addr, err)
	}
	return nil
}
