package lambda

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Over the Invoke API (buffered and streamed answers): GetMany sends one
// invoke per other owner and gets every score, and "not found" for the
// missing key alone; RemoveMany and Purge reach every node with one invoke
// each.
func TestBatchOverInvoke(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			var invokes atomic.Int64
			nodes, _, loads := invokeClusterCounting(t, 3, stream, &invokes)
			keys := []string{"Tom", "kkk", "Jack", "Sam"}
			owners := map[string]bool{}
			for _, k := range keys {
				if o := nodes[0].Peers.Owner(k); o != nodes[0].Config.SelfURL {
					owners[o] = true
				}
			}
			g := nodes[0].Registry.Lookup("scores")
			check := func() {
				t.Helper()
				g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
					want, ok := seedScores[keys[i]]
					switch {
					case !ok:
						if !errors.Is(err, getter.ErrNotFound) {
							t.Errorf("%s: %q, %v; want not found", keys[i], v, err)
						}
					case err != nil || v.String() != want:
						t.Errorf("%s: %q, %v; want %s", keys[i], v, err, want)
					}
				})
			}
			check()
			if n := invokes.Load(); n != int64(len(owners)) {
				t.Fatalf("GetMany made %d invokes; want %d, one per other owner", n, len(owners))
			}
			for k := range seedScores {
				total := 0
				for _, l := range loads {
					total += l.get(k)
				}
				if total != 1 {
					t.Errorf("%s loaded %d times in the cluster, want 1", k, total)
				}
			}
			invokes.Store(0)
			// Without a secret the peers refuse a write: each is told once,
			// and named.
			var ue *cache.UpdateError
			if err := g.Purge(t.Context()); !errors.As(err, &ue) || len(ue.Failed) != 2 {
				t.Fatalf("an unsigned Purge = %v; want both peers named", err)
			}
			if n := invokes.Load(); n != 2 {
				t.Fatalf("Purge made %d invokes; want 2, one per peer", n)
			}
		})
	}
}
