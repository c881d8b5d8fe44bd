//go:build !js && !wasip1

package mux

import (
	"net/http"
	"runtime"
	"testing"
	"time"
)

// TestMultiplexConnectionThatCarriedNothingHoldsNoBuffers: a multiplexed
// connection allocates its 64 KiB read and write buffers, at either end,
// for its first frame, not when it opens: a node holds one connection
// per peer and serves up to MaxConns of them, many idle. Opening a
// connection and closing it unused costs both ends together less than
// one such buffer (it cost four of them).
func TestMultiplexConnectionThatCarriedNothingHoldsNoBuffers(t *testing.T) {
	noLeaks(t)
	srv, addr := startServer(t)
	tr := newMuxTransport(&http.Transport{}, "", 1<<20, 10*time.Second)
	defer tr.CloseIdleConnections()
	served := func() []*muxServerConn {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		var scs []*muxServerConn
		for sc := range srv.conns {
			scs = append(scs, sc)
		}
		return scs
	}
	openAndClose := func(check bool) {
		mc, err := tr.conn(t.Context(), addr)
		if err != nil || mc == nil {
			t.Fatalf("opening a connection: %v, %v", mc, err)
		}
		if check {
			mc.wmu.Lock()
			unbuffered := mc.bw == nil
			mc.wmu.Unlock()
			if !unbuffered {
				t.Error("the asking end of a connection that carried nothing holds a write buffer")
			}
			for _, sc := range served() {
				sc.wmu.Lock()
				unbuffered := sc.bw == nil
				sc.wmu.Unlock()
				if !unbuffered {
					t.Error("the serving end of a connection that carried nothing holds a write buffer")
				}
			}
		}
		tr.CloseIdleConnections()
		<-mc.done
		guard := time.Now().Add(30 * time.Second) // a hang guard, not a measurement
		for len(served()) > 0 {                   // the serving end has ended, its allocations done
			if time.Now().After(guard) {
				t.Fatal("the serving end of a closed connection never ended")
			}
			time.Sleep(time.Millisecond)
		}
	}
	openAndClose(true) // and warm up
	const conns = 8
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range conns {
		openAndClose(false)
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / conns
	t.Logf("%d KiB allocated per connection opened and closed unused", per>>10)
	if per >= muxBufSize {
		t.Fatalf("%d KiB allocated, both ends together, per connection opened and closed unused; want less than one %d KiB buffer", per>>10, muxBufSize>>10)
	}
}
