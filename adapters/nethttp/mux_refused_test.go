//go:build !js && !wasip1

package nethttp

import (
	"encoding/binary"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// TestMultiplexRefusedFrameBodyIsSkipped: a request frame that the handler
// refuses on its head alone (an unsigned write; a request that takes no
// body) is answered before its body arrives, the body is skipped, not
// read into a buffer, and the connection stays in step: the request
// after it is answered. Before, the server read the body whole (4 MiB
// here) into a buffer, and only then refused it.
func TestMultiplexRefusedFrameBodyIsSkipped(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		header       http.Header
		status       int
	}{
		{"unsigned write", http.MethodPut, http.Header{protocol.HeaderPeer: {"http://127.0.0.1:1"}}, http.StatusUnauthorized},
		{"body on a read", http.MethodGet, nil, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			_, _, addr := startMuxServer(t, newMuxSource(), 0)
			const bodyLen = 4 << 20
			f := mux.StartFrame(nil, mux.KindRequest, 0)
			f = mux.AppendString(f, tc.method)
			f = mux.AppendString(f, "/_geecache/g/k")
			f, _ = mux.AppendFields(f, tc.header)
			mux.EndHead(f)
			mux.SetLen(f, bodyLen)
			refused := len(f)
			f = append(f, make([]byte, bodyLen)...)
			next := len(f)
			f = mux.StartFrame(f, mux.KindRequest, 0)
			f = mux.AppendString(f, http.MethodGet)
			f = mux.AppendString(f, "/_geecache/g/k")
			f, _ = mux.AppendFields(f, nil)
			mux.EndHead(f[next:])
			mux.SetLen(f[next:], 0)
			c, r := rawMux(t, addr)
			_ = c.SetDeadline(time.Now().Add(time.Minute)) // a hang guard, not a measurement
			// id is the refused frame's; the request after it is id+1.
			id := uint32(0)
			// answers reads the answers to the refused frame, if refused,
			// and to the request after it, if next, in any order.
			answers := func(refused, next bool) {
				t.Helper()
				want := map[uint32]int{}
				if refused {
					want[id] = tc.status
				}
				if next {
					want[id+1] = http.StatusOK
				}
				for len(want) > 0 {
					kind, got, status, _, _, err := r.next()
					if err != nil || kind != mux.KindAnswer || status != want[got] {
						t.Fatalf("kind %d, request %d, status %d, %v; want the answers %v (request: status)", kind, got, status, err, want)
					}
					delete(want, got)
				}
			}
			write := func(p []byte) {
				t.Helper()
				if _, err := c.Write(p); err != nil {
					t.Fatal(err)
				}
			}
			ids := func() {
				id += 2
				binary.BigEndian.PutUint32(f[5:], id)
				binary.BigEndian.PutUint32(f[next+5:], id+1)
			}

			ids()
			write(f[:refused+1024]) // the head and 1 KiB of the body
			answers(true, false)    // the refusal, before the body
			write(f[refused+1024:]) // the rest, and the next request
			answers(false, true)

			const rounds = 8
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range rounds {
				ids()
				write(f)
				answers(true, true)
			}
			runtime.ReadMemStats(&after)
			per := (after.TotalAlloc - before.TotalAlloc) / rounds
			t.Logf("%d KiB allocated per refused frame of %d KiB and request after it", per>>10, bodyLen>>10)
			if per >= bodyLen/8 {
				t.Fatalf("%d KiB allocated per refused frame of %d KiB (and a request after it); want its body not read into a buffer", per>>10, bodyLen>>10)
			}
		})
	}
}
