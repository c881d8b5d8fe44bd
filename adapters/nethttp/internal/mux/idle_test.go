//go:build !js && !wasip1

package mux

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestMultiplexUnusedConnectionClosesAfterTheIdleTimeout: the asking node
// closes a multiplexed connection once it has gone unused for
// muxIdleTimeout (60 s, PROTOCOL.md, "Closing"), counted from its last
// use, not at the first check after a whole period without one (which
// kept a connection used once open for up to twice as long). Time is
// the bubble's: the peer is a net.Pipe.
func TestMultiplexUnusedConnectionClosesAfterTheIdleTimeout(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		tr := newMuxTransport(&http.Transport{}, "", 1<<20, 5*time.Second)
		closed := make(chan struct{})
		tr.dial = func(context.Context, string, string) (net.Conn, error) {
			c, peer := net.Pipe()
			go pipeMuxPeer(peer, closed)
			return c, nil
		}
		defer tr.CloseIdleConnections() // if the test fails with the connection open
		get := func() {
			t.Helper()
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://peer:8000/_geecache/g/k", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
		}
		get() // opens the connection
		time.Sleep(muxIdleTimeout / 2)
		get() // its last use
		time.Sleep(muxIdleTimeout - time.Second)
		synctest.Wait()
		select {
		case <-closed:
			t.Fatalf("the connection closed after %v unused; want it open until %v", muxIdleTimeout-time.Second, muxIdleTimeout)
		default:
		}
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-closed:
		default:
			t.Fatalf("the connection is open after %v unused; want it closed", muxIdleTimeout)
		}
	})
}

// pipeMuxPeer is a peer at the far end of a net.Pipe: it accepts the
// upgrade and answers every request frame with an empty 200, until the
// connection ends; then it closes closed.
func pipeMuxPeer(c net.Conn, closed chan<- struct{}) {
	defer close(closed)
	defer c.Close()
	br := bufio.NewReader(c)
	if _, err := http.ReadRequest(br); err != nil {
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+Protocol+"\r\n\r\n"); err != nil {
		return
	}
	for {
		n, kind, id, err := ReadHeader(br)
		if err == nil {
			_, err = ReadPayload(br, n)
		}
		if err != nil {
			return
		}
		if kind != KindRequest {
			continue
		}
		f := StartFrame(nil, KindAnswer, id)
		f = binary.BigEndian.AppendUint16(f, http.StatusOK)
		f, _ = AppendFields(f, nil)
		EndHead(f)
		SetLen(f, 0)
		if _, err := c.Write(f); err != nil {
			return
		}
	}
}
