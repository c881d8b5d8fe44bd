package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/getter"
)

// TestColdKeyThunderingHerd starts 1000 concurrent Gets of one cold key
// whose Getter takes 50 ms, and checks that the Getter ran once and every
// caller got the value. (Timing is not asserted: the 50 ms only makes the
// Gets overlap.)
func TestColdKeyThunderingHerd(t *testing.T) {
	const callers = 1000
	var calls atomic.Int64
	slow := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		calls.Add(1)
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return []byte("value of " + key), nil
	})
	g := newGeeGroup(t, "herd", 1<<20, slow)

	ctx := context.Background()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for range callers {
		wg.Go(func() {
			<-start
			v, err := g.Get(ctx, "cold")
			if err != nil || v.String() != "value of cold" {
				wrong.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()

	if n := calls.Load(); n != 1 {
		t.Errorf("Getter called %d times for %d concurrent Gets, want 1", n, callers)
	}
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d of %d Gets failed or got a wrong value", n, callers)
	}
	s := g.Stats()
	if s.Gets != callers || s.LocalLoads != 1 {
		t.Errorf("Stats: Gets = %d, LocalLoads = %d; want %d, 1", s.Gets, s.LocalLoads, callers)
	}
	t.Logf("Stats: hits %d, dedup waits %d, local loads %d", s.Hits, s.DedupWaits, s.LocalLoads)
}
