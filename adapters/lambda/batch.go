package lambda

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Batch is not sent over the Invoke API yet: the group asks the peer
// function key by key (Get, Remove), as it asks a peer of the previous
// protocol version.
func (c *invokeClient) Batch(context.Context, string, []string, bool, func(int, []byte, time.Duration, error)) error {
	return fmt.Errorf("geecache: peer %s: batches over the Invoke API: %w", c.name, errors.ErrUnsupported)
}
