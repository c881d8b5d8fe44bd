//go:build !js && !wasip1

package nethttp

import (
	"errors"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
)

// TestMultiplexPeerHangsMidFrameHeader: a peer that sends the first bytes
// of an answer's 9-byte frame header and stops has begun a frame, which
// must arrive within the request timeout (PROTOCOL.md, "Limits"): the
// client ends the connection then, as it does for a frame stalled after
// its header, so that its next requests go over a new one instead of
// each waiting its timeout behind the stalled frame, for as long as the
// peer keeps the connection open.
func TestMultiplexPeerHangsMidFrameHeader(t *testing.T) {
	noLeaks(t)
	ended := make(chan error, 1)
	addr := startFakeMuxPeer(t, func(c net.Conn, r *muxReader) {
		kind, id, _, _, _, err := r.next()
		if err != nil || kind != mux.KindRequest {
			ended <- err
			return
		}
		_, _ = c.Write(answerHead(mux.KindAnswer, id, 1000)[:4]) // 4 bytes of the 9, then nothing
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))  // the test fails by this
		for {
			if _, _, _, _, _, err := r.next(); err != nil {
				ended <- err
				return
			}
		}
	})
	reg := cache.NewRegistry()
	pool, err := NewPool("", reg, &PoolOptions{Multiplex: true, Timeout: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	mustSet(t, pool, addr)
	peer, _ := pool.PickPeer("k")
	if _, _, err := peerGet(t.Context(), peer, "g", "k"); err == nil {
		t.Fatal("Get from a peer hung mid-header succeeded")
	}
	if err := <-ended; !errors.Is(err, io.EOF) {
		t.Fatalf("the peer's end of the connection: %v; want it closed by the client (EOF)", err)
	}
}
