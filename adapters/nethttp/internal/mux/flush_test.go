//go:build !js && !wasip1

package mux

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// A writer that sends nothing (the connection began to close while it
// waited) still flushes the frames the writers before it left for it:
// here a request written while another writer waited, which leaves its
// frame buffered for that one. Before, it stayed in the buffer until its
// caller gave up. Time is the bubble's: the peer is a net.Pipe.
func TestMultiplexWriterThatSendsNothingFlushesTheOthers(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		tr := newMuxTransport(&http.Transport{}, "", 1<<20, 5*time.Second)
		tr.dial = func(context.Context, string, string) (net.Conn, error) {
			c, peer := net.Pipe()
			go pipeMuxPeer(peer, make(chan struct{}))
			return c, nil
		}
		defer tr.CloseIdleConnections()
		get := func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://peer:8000/_geecache/g/k", nil)
			if err != nil {
				return err
			}
			resp, err := tr.RoundTrip(req)
			if err == nil {
				_ = resp.Body.Close()
			}
			return err
		}
		if err := get(t.Context()); err != nil { // opens the connection
			t.Fatal(err)
		}
		tr.mu.Lock()
		mc := tr.conns["peer:8000"]
		tr.mu.Unlock()

		mc.waiting.Add(1) // a writer waits: the next frame is left for it to flush
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		first := make(chan error, 1)
		go func() { first <- get(ctx) }()
		synctest.Wait() // its frame is in the buffer

		// The waiting writer is the next request's, on this connection,
		// which begins to close meanwhile: it sends nothing here.
		mc.waiting.Add(-1)
		tr.CloseIdleConnections()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://peer:8000/_geecache/g/k2", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mc.roundTrip(req, nil); !errors.Is(err, errMuxRetry) {
			t.Fatalf("a request on the closing connection: %v; want %v", err, errMuxRetry)
		}
		synctest.Wait()
		select {
		case err := <-first:
			if err != nil {
				t.Fatalf("the first request: %v", err)
			}
		default:
			t.Fatal("the first request has no answer: its frame was not sent")
		}
	})
}
