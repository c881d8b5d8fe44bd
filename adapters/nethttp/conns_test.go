package nethttp

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
)

// serve serves srv on a 127.0.0.1 port the OS picked, with read timeouts
// of an hour, so that a connection the server holds until a timeout would
// outlast any test. Cleanup closes it and waits for Serve to return.
func serve(t *testing.T, srv *http.Server) string {
	t.Helper()
	srv.ReadHeaderTimeout, srv.ReadTimeout = time.Hour, time.Hour
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return ln.Addr().String()
}

func newTestPool(t *testing.T, o *PoolOptions) *Pool {
	t.Helper()
	reg := cache.NewRegistry()
	o.Logger = slog.New(slog.DiscardHandler)
	p, err := NewPool("", reg, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.NewGroup("scores", 1<<20, &db{calls: map[string]int{}}, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// A request whose body the node refuses gets its answer, then the
// connection is closed: the node does not wait for the rest of the body
// (net/http would drain up to 256 KiB, holding the connection until
// ReadTimeout for a caller that never sends it).
func TestRefusedBodyClosesTheConnection(t *testing.T) {
	strict := serve(t, NewServer("", newTestPool(t, &PoolOptions{})))
	lenient := serve(t, NewServer("", newTestPool(t, &PoolOptions{UnsignedWrites: true, MaxValueBytes: 100})))
	for _, tc := range []struct {
		name, addr, req, body string
		status                int
	}{
		{"unsigned PUT", strict, "PUT /_geecache/scores/Tom HTTP/1.1\r\nX-Geecache-Peer: 1\r\nContent-Length: 1000\r\n", "", 401},
		{"PUT not from a peer", lenient, "PUT /_geecache/scores/Tom HTTP/1.1\r\nContent-Length: 1000\r\n", "", 400},
		{"GET with a body", lenient, "GET /_geecache/scores/Tom HTTP/1.1\r\nContent-Length: 1000\r\n", "", 400},
		{"PUT over the limit", lenient, "PUT /_geecache/scores/Tom HTTP/1.1\r\nX-Geecache-Peer: 1\r\nContent-Length: 1000\r\n", "", 413},
		{"chunked PUT over the limit", lenient, "PUT /_geecache/scores/Tom HTTP/1.1\r\nX-Geecache-Peer: 1\r\nTransfer-Encoding: chunked\r\n",
			"c8\r\n" + string(make([]byte, 200)) + "\r\n", 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// The body is announced and (all or part of it) never sent.
			if _, err := io.WriteString(c, tc.req+"Host: node\r\n\r\n"+tc.body); err != nil {
				t.Fatal(err)
			}
			// A bound far below the server's ReadTimeout (an hour), not a
			// timing assertion.
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			r := bufio.NewReader(c)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d; want %d", resp.StatusCode, tc.status)
			}
			if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
				t.Fatalf("after the refusal: read %d bytes, %v; want the connection closed (EOF)", n, err)
			}
		})
	}
}
