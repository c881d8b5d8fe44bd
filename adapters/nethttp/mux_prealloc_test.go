//go:build !js && !wasip1

package nethttp

import (
	"errors"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// TestMultiplexAnnouncedFrameCostsTheServerWhatArrived: a caller, signed
// or not, that opens a multiplexed connection and announces a request
// frame whose body the node reads (a batch of reads, which any caller
// may send) of 1 MiB, then sends one byte of its body, costs the serving
// node about what it sent, not the announced size: else MaxConns (1,024)
// callers that each send a few dozen bytes hold 1 GiB of the node's
// memory for the read timeout (and a write, whose limit is the value
// size, far more).
func TestMultiplexAnnouncedFrameCostsTheServerWhatArrived(t *testing.T) {
	noLeaks(t)
	_, _, addr := startMuxServer(t, nil, 0)
	const conns = 8
	frame := func() []byte {
		f := mux.StartFrame(nil, mux.KindRequest, 1)
		f = mux.AppendString(f, http.MethodPost)
		f = mux.AppendString(f, "/_geecache/g/!get")
		f, _ = mux.AppendFields(f, http.Header{protocol.HeaderPeer: {"http://127.0.0.1:1"}})
		mux.EndHead(f)
		mux.SetLen(f, protocol.MaxBatchBytes) // announced, never sent
		return append(f, 'x')
	}()
	announce := func() {
		c, r := rawMux(t, addr)
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		_ = c.(*net.TCPConn).CloseWrite() // the frame ends early: the server's read fails and it closes
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		if _, _, _, _, _, err := r.next(); !errors.Is(err, io.EOF) {
			t.Fatalf("after a frame cut short: %v; want the connection closed", err)
		}
		_ = c.Close()
	}
	announce() // warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range conns {
		announce()
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / conns
	t.Logf("%d KiB allocated per connection", per>>10)
	if per >= protocol.MaxBatchBytes/2 {
		t.Fatalf("%d KiB allocated per connection that announced a %d KiB frame and sent 1 byte of it; want about what arrived", per>>10, protocol.MaxBatchBytes>>10)
	}
}
