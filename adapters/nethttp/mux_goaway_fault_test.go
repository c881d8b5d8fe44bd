//go:build !js && !wasip1

package nethttp

import (
	"context"
	"encoding/binary"
	"errors"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Peers that misuse the go-away frame: they keep answering after it,
// flood it, lie about its length or id, or stop in its middle. The first
// multiplexed connection a client opens to such a peer goes to the fault;
// every later one (and every HTTP/1.1 request) to a real node behind it.

// A faultFirstListener hands the first connection it accepts to fault and
// the others to the Server.
type faultFirstListener struct {
	net.Listener
	fault func(c net.Conn)
	n     atomic.Int64
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func (l *faultFirstListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.n.Add(1) > 1 {
			return c, err
		}
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
		l.wg.Go(func() {
			defer c.Close()
			l.fault(c)
		})
	}
}

// startGoAwayFault starts a real node (group "g" on src; muxSource's if
// nil) on 127.0.0.1 whose first connection is behave's: it takes the
// upgrade and calls behave with each request frame's id and path, until
// the client closes.
func startGoAwayFault(t *testing.T, src getter.Getter, behave func(c net.Conn, id uint32, path string)) (addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fl := &faultFirstListener{Listener: ln, fault: func(c net.Conn) {
		r := newMuxReader(c)
		if _, err := http.ReadRequest(r.br); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+mux.Protocol+"\r\n\r\n")
		for {
			n, kind, id, err := mux.ReadHeader(r.br)
			if err != nil {
				return
			}
			payload, err := mux.ReadPayload(r.br, n)
			if err != nil {
				return
			}
			if kind == mux.KindRequest {
				head, _, _ := mux.Split(payload)
				head.Text()
				behave(c, id, head.Text())
			}
		}
	}}
	t.Cleanup(func() {
		fl.mu.Lock()
		for _, c := range fl.conns {
			_ = c.Close()
		}
		fl.mu.Unlock()
		fl.wg.Wait()
	})
	if src == nil {
		src = newMuxSource()
	}
	_, _, addr = serveMux(t, fl, src, 0)
	return addr
}

// goAwayFrame returns a go-away frame announcing n payload bytes and
// naming last.
func goAwayFrame(n, last uint32) []byte {
	return binary.BigEndian.AppendUint32(answerHead(mux.KindGoAway, 0, n), last)
}

// muxPeer returns the Client, over a client-only Pool with Multiplex, of
// the peer at addr.
func muxPeer(t *testing.T, addr string) *Client {
	t.Helper()
	pool, err := NewPool("", cache.NewRegistry(), &PoolOptions{Multiplex: true, Timeout: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close() })
	mustSet(t, pool, "http://"+addr)
	peer, _ := pool.PickPeer("k")
	return peer.(*Client)
}

// genuineAnswer returns an answer frame to id carrying the real node's
// genuine answer for key, fetched over HTTP/1.1: a value that passes
// every check, but another key's.
func genuineAnswer(addr, key string, id uint32) []byte {
	resp, err := http.Get("http://" + addr + "/_geecache/g/" + key)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	resp.Header.Del("Content-Length")
	f := mux.StartFrame(nil, mux.KindAnswer, id)
	f = append(f, byte(resp.StatusCode>>8), byte(resp.StatusCode))
	f, _ = mux.AppendFields(f, resp.Header)
	mux.EndHead(f)
	mux.SetLen(f, len(body))
	return append(f, body...)
}

// TestMultiplexGoAwayThenKeepsSending: a peer that sends a go-away naming
// none of the requests, then answers one of them anyway, with another
// key's genuine value, and then answers ids never sent: the request is
// sent again over a new connection and gets its own value, never the
// late answer's.
func TestMultiplexGoAwayThenKeepsSending(t *testing.T) {
	noLeaks(t)
	var addr string
	addr = startGoAwayFault(t, nil, func(c net.Conn, id uint32, _ string) {
		_, _ = c.Write(goAwayFrame(4, id-1))
		_, _ = c.Write(genuineAnswer(addr, "other", id))
		for i := range uint32(100) {
			_, _ = c.Write(genuineAnswer(addr, "other", id+1+i))
		}
	})
	peer := muxPeer(t, addr)
	for _, k := range []string{"k1", "k2"} {
		v, _, err := peerGet(t.Context(), peer, "g", k)
		if err != nil || string(v) != "v:"+k {
			t.Fatalf("Get(%s) = %q, %v; want the real node's value", k, v, err)
		}
	}
}

// TestMultiplexGoAwayFlood: a peer that floods go-aways. If the first one
// leaves the request out, the request is sent again and answered; if it
// takes the request, the second go-away breaks the format and ends the
// connection: the request fails (the group would load it itself), never
// with a wrong value, at a bounded cost, and the next request is answered
// over a new connection.
func TestMultiplexGoAwayFlood(t *testing.T) {
	for _, taken := range []bool{false, true} {
		t.Run("taken "+strconv.FormatBool(taken), func(t *testing.T) {
			noLeaks(t)
			addr := startGoAwayFault(t, nil, func(c net.Conn, id uint32, _ string) {
				last := id - 1
				if taken {
					last = id
				}
				var flood []byte
				for range 10000 {
					flood = append(flood, goAwayFrame(4, last)...)
				}
				_, _ = c.Write(flood)
			})
			peer := muxPeer(t, addr)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			v, _, err := peerGet(t.Context(), peer, "g", "k1")
			runtime.ReadMemStats(&after)
			switch {
			case !taken && (err != nil || string(v) != "v:k1"):
				t.Fatalf("Get(k1) = %q, %v; want the real node's value (sent again)", v, err)
			case taken && (err == nil || !errors.Is(err, mux.ErrLost)):
				t.Fatalf("Get(k1) = %q, %v; want the connection lost", v, err)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 4<<20 {
				t.Errorf("%d KiB allocated for one Get under a go-away flood", d>>10)
			}
			if v, _, err := peerGet(t.Context(), peer, "g", "k2"); err != nil || string(v) != "v:k2" {
				t.Fatalf("Get(k2) = %q, %v; want the real node's value over a new connection", v, err)
			}
		})
	}
}

// TestMultiplexGoAwayLies: a go-away of the wrong length (short, long,
// huge) or naming a request never sent ends the connection at once: the
// request fails, it is not held, and the next one is answered over a new
// connection.
func TestMultiplexGoAwayLies(t *testing.T) {
	lies := map[string]func(id uint32) []byte{
		"short":        func(id uint32) []byte { return goAwayFrame(3, id)[:mux.FrameHeader+3] },
		"long":         func(id uint32) []byte { return append(goAwayFrame(5, id), 0) },
		"huge":         func(id uint32) []byte { return goAwayFrame(0xffffffff, id) },
		"id not sent":  func(id uint32) []byte { return goAwayFrame(4, id+1000) },
		"id wraps":     func(uint32) []byte { return goAwayFrame(4, 0xffffffff) },
		"then garbage": func(id uint32) []byte { return append(goAwayFrame(4, id), "HTTP/1.1 200 OK\r\n\r\n"...) },
	}
	for name, lie := range lies {
		t.Run(name, func(t *testing.T) {
			noLeaks(t)
			addr := startGoAwayFault(t, nil, func(c net.Conn, id uint32, _ string) { _, _ = c.Write(lie(id)) })
			peer := muxPeer(t, addr)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a Get held past it fails the test
			defer cancel()
			if v, _, err := peerGet(ctx, peer, "g", "k1"); !errors.Is(err, mux.ErrLost) {
				t.Fatalf("Get(k1) = %q, %v; want the connection lost", v, err)
			}
			if v, _, err := peerGet(ctx, peer, "g", "k2"); err != nil || string(v) != "v:k2" {
				t.Fatalf("Get(k2) = %q, %v; want the real node's value over a new connection", v, err)
			}
		})
	}
}

// TestMultiplexGoAwayHangsMidFrame: a peer that sends the start of a
// go-away and stops holds the request no longer than its context.
func TestMultiplexGoAwayHangsMidFrame(t *testing.T) {
	noLeaks(t)
	addr := startGoAwayFault(t, nil, func(c net.Conn, id uint32, _ string) {
		_, _ = c.Write(goAwayFrame(4, id)[:mux.FrameHeader+2])
	})
	peer := muxPeer(t, addr)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, _, err := peerGet(ctx, peer, "g", "k1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get from a peer hung in a go-away: %v; want the context's deadline", err)
	}
}
