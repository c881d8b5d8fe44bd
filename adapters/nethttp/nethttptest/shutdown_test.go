//go:build !js

package nethttptest_test

import (
	"context"
	"github.com/geecache/geecache/internal/peertest"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
)

// slowHit is a Tracer that holds the serving goroutine on a hit of key
// "slow", whatever the request's context says: a request still in the
// node when its Cleanup runs. It sleeps rather than waiting on the test,
// so that nothing orders the request's start before the Cleanup.
type slowHit struct{}

func (slowHit) Start(ctx context.Context, step, _, key, _ string) (context.Context, cache.Span) {
	if step == "hit" && key == "slow" {
		time.Sleep(100 * time.Millisecond)
	}
	return ctx, noSpan{}
}

type noSpan struct{}

func (noSpan) End(error) {}

// TestShutdownWhileServing stops a cluster while one of its nodes serves
// a request that began beside the Cleanup, not before it (as a
// background retry's or another node's request does): the Cleanup's wait
// for the node's requests must not race with the request's start (run
// with -race: a WaitGroup's Add from zero must happen before its Wait).
// The test's pause only makes the overlap likely; without it the test
// passes.
func TestShutdownWhileServing(t *testing.T) {
	var wg sync.WaitGroup
	t.Run("cluster", func(t *testing.T) {
		nodes := nethttptest.Start(t, 1, &nethttptest.Options{GroupOptions: cache.GroupOptions{Tracer: slowHit{}}})
		if _, _, err := peertest.Get(t.Context(), localPeer{nodes[0].Registry}, "scores", "slow"); err != nil { // a miss: loaded, then a hit
			t.Fatal(err)
		}
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, nodes[0].Addr+"/_geecache/scores/slow", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Geecache-Peer", "1")
		wg.Go(func() {
			if resp, err := tr.RoundTrip(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
		time.Sleep(20 * time.Millisecond) // the request is likely in the node: stop it
	})
	wg.Wait()
}
