//go:build !js

package lambda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	awsl "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/lambda/internal/urlevent"
)

// Batch invokes the peer function with one batch request (split over the
// protocol's limits by protocol.Do: 1,000 keys or 1 MiB of keys, well
// within the 6 MiB request payload after base64). The peer keeps each
// answer within its size limit, which a Lambda node sets to what fits the
// response payload: a value that does not fit comes back as "ask alone",
// and the group asks for it with a Get. A peer function of the previous
// protocol version answers 405: an error wrapping errors.ErrUnsupported,
// so that the group asks key by key.
func (c *invokeClient) Batch(ctx context.Context, group string, op protocol.BatchOp, keys []string, peek bool, _ protocol.Listener, each func(int, []byte, time.Duration, error)) error {
	return c.batch(ctx, group, op, keys, peek, each)
}

// batch invokes the peer function with one batch request.
func (c *invokeClient) batch(ctx context.Context, group string, op protocol.BatchOp, keys []string, peek bool, each func(int, []byte, time.Duration, error)) error {
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > c.timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	preq := c.proto.NewBatchRequest(ctx, c.name, group, op, keys, peek)
	payload, err := json.Marshal(invokeEvent(preq))
	if err != nil {
		return fmt.Errorf("peer %s: encoding event: %w", c.name, err)
	}
	out, err := c.api.Invoke(ctx, &awsl.InvokeInput{FunctionName: &c.function, Qualifier: c.qualifier, Payload: payload}, c.optFns...)
	if err != nil {
		return c.invokeError(err)
	}
	if out.FunctionError != nil {
		return c.functionError(fmt.Sprintf("%s: %.500s", *out.FunctionError, out.Payload))
	}
	ans, err := urlevent.Decode(out.Payload)
	switch {
	case errors.Is(err, urlevent.ErrFunctionError):
		return c.functionError(err.Error())
	case err != nil:
		return fmt.Errorf("peer %s: %w: %w", c.name, protocol.ErrBadResponse, err)
	}
	if err := c.proto.ReadBatchResponse(ctx, preq, ans.Status, ans.Header, int64(len(ans.Body)), bytes.NewReader(ans.Body), keys, each); err != nil {
		return fmt.Errorf("peer %s: %w", c.name, err)
	}
	return nil
}
