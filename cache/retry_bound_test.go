package cache_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
)

// docs/writes.md, "Writes under faults": the group retries dropping the key
// at the nodes that did not confirm in the background, 6 attempts over
// about 30 s, up to 1,024 keys per group. (Ejection is kept out of the way:
// these are the retry bounds alone.)
func TestWriteRetriesAreBounded(t *testing.T) {
	policy := cache.PeerPolicy{NoHedge: true, EjectAfter: 1 << 30}
	t.Run("attempts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var db sync.Map
			nodes := newMemClusterWith(t, &db, cache.GroupOptions{PeerPolicy: policy})
			nodes[2].down.Store(true)
			if err := nodes[0].group.Remove(t.Context(), "a-key"); !errors.Is(err, cache.ErrPartialUpdate) {
				t.Fatalf("Remove with node2 down = %v; want ErrPartialUpdate", err)
			}
			first := nodes[2].writes.Load()
			time.Sleep(time.Hour)
			synctest.Wait()
			retries := nodes[2].writes.Load() - first
			if retries != 6 {
				t.Fatalf("a node that stays down was told again %d times; want 6", retries)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
		})
	})
	t.Run("keys", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var db sync.Map
			nodes := newMemClusterWith(t, &db, cache.GroupOptions{PeerPolicy: policy})
			nodes[2].down.Store(true)
			const n = 1100
			for i := range n {
				if err := nodes[0].group.Remove(t.Context(), fmt.Sprint("a-", i)); !errors.Is(err, cache.ErrPartialUpdate) {
					t.Fatalf("Remove with node2 down = %v; want ErrPartialUpdate", err)
				}
			}
			before := nodes[2].writes.Load()
			nodes[2].down.Store(false)
			time.Sleep(time.Hour)
			synctest.Wait()
			if retried := nodes[2].writes.Load() - before; retried != 1024 {
				t.Fatalf("%d writes unconfirmed by node2, then %d retried once it was back; want 1024 (the cap)", n, retried)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
		})
	})
}
