//go:build !js && !wasip1

package nethttp

import (
	"errors"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestMultiplexServerEndsFrameCutShortInItsHeader: a caller that sends the
// first bytes of a frame header and stops has begun a frame, which must
// arrive within the server's read timeout (PROTOCOL.md, "Limits"), as
// the rest of a frame must: the server closes the connection then,
// whether requests are in flight on it (which had no deadline at all) or
// none are (which waited for the idle timeout, here far longer).
func TestMultiplexServerEndsFrameCutShortInItsHeader(t *testing.T) {
	for _, busy := range []bool{false, true} {
		name := "idle"
		if busy {
			name = "request in flight"
		}
		t.Run(name, func(t *testing.T) {
			noLeaks(t)
			src := newMuxSource()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			_, _, addr := serveMuxWith(t, ln, src, 0, func(p *Pool) {
				p.mux = mux.NewServer(mux.ServerConfig{Handler: p.handler, MaxValue: p.handler.srv.MaxValueBytes(), Logger: p.log,
					ReadTimeout: 200 * time.Millisecond, WriteTimeout: serverWriteTimeout,
					IdleTimeout: time.Hour, // not what closes the connection
				})
			})
			c, r := rawMux(t, addr)
			if busy {
				f := mux.StartFrame(nil, mux.KindRequest, 1)
				f = mux.AppendString(f, http.MethodGet)
				f = mux.AppendString(f, "/_geecache/g/slow-1")
				f, _ = mux.AppendFields(f, nil)
				mux.EndHead(f)
				mux.SetLen(f, 0)
				if _, err := c.Write(f); err != nil {
					t.Fatal(err)
				}
				<-src.started // in flight; never released
			}
			if _, err := c.Write(answerHead(mux.KindRequest, 2, 100)[:4]); err != nil { // 4 bytes of the 9, then nothing
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a hang guard, not a measurement
			for {
				kind, id, _, _, _, err := r.next()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatalf("after a frame header cut short: %v; want the connection closed by the server (EOF)", err)
					}
					break
				}
				if !busy || kind != mux.KindAnswer || id != 1 { // the request in flight may be answered (its load cancelled)
					t.Fatalf("after a frame header cut short: a frame of kind %d for request %d", kind, id)
				}
			}
		})
	}
}
