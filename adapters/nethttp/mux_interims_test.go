//go:build !js && !wasip1

package nethttp

import (
	"fmt"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// A node repeats its 102 while a load runs only to a client that said, in
// its upgrade, that it takes them (an older client ends a connection that
// brings more than 5); an older one gets the first only, as before.
func TestMultiplexRepeatedInterimsOnlyToClientsThatTakeThem(t *testing.T) {
	for _, takes := range []bool{false, true} {
		t.Run(fmt.Sprint("takes repeated 102s: ", takes), func(t *testing.T) {
			noLeaks(t)
			src := newMuxSource()
			_, _, addr := startMuxServer(t, src, 0)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			features := mux.GoAway
			if takes {
				features += ", " + mux.Interims
			}
			_, _ = io.WriteString(c, "GET "+mux.Path+" HTTP/1.1\r\nHost: "+addr+"\r\nConnection: Upgrade\r\nUpgrade: "+mux.Protocol+
				"\r\n"+mux.Features+": "+features+"\r\n\r\n")
			r := newMuxReader(c)
			if resp, err := http.ReadResponse(r.br, nil); err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("upgrade: %v, %v", resp, err)
			}
			f := mux.StartFrame(nil, mux.KindRequest, 1)
			f = mux.AppendString(f, http.MethodGet)
			f = mux.AppendString(f, "/_geecache/g/slow-1")
			f, _ = mux.AppendFields(f, http.Header{protocol.HeaderPeer: {"1"}})
			mux.EndHead(f)
			mux.SetLen(f, 0)
			if _, err := c.Write(f); err != nil {
				t.Fatal(err)
			}
			<-src.started
			time.Sleep(5 * processingEvery) // time for several 102s (a wait, not an assertion)
			close(src.release)
			_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang fails the test by this
			interims := 0
			for {
				kind, id, status, _, body, err := r.next()
				if err != nil {
					t.Fatal(err)
				}
				if kind == mux.KindInterim {
					interims++
					continue
				}
				if kind != mux.KindAnswer || id != 1 || status != http.StatusOK || string(body) != "v:slow-1" {
					t.Fatalf("frame: kind %d id %d status %d %q; want the answer to request 1", kind, id, status, body)
				}
				break
			}
			switch {
			case !takes && interims != 1:
				t.Fatalf("%d 102s to a client that takes one; want 1", interims)
			case takes && interims < 2:
				t.Fatalf("%d 102s over a load of %v; want one every %v", interims, 5*processingEvery, processingEvery)
			}
		})
	}
}
