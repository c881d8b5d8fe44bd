//go:build !js

package nethttp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// serve serves srv on a 127.0.0.1 port the OS picked, with read timeouts
// of an hour, so that a connection the server holds until a timeout would
// outlast any test. It returns the address and the listener it gave
// Serve. Cleanup closes the server and waits for Serve to return.
func serve(t *testing.T, srv *Server) (string, *countingListener) {
	t.Helper()
	srv.ReadHeaderTimeout, srv.ReadTimeout = time.Hour, time.Hour
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: l}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return ln.Addr().String(), ln
}

// A countingListener counts the connections taken off its socket.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

func newTestPool(t *testing.T, o *PoolOptions) *Pool {
	t.Helper()
	reg := cache.NewRegistry()
	o.Logger = slog.New(slog.DiscardHandler)
	p, err := NewPool("", reg, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.NewGroup("scores", 1<<20, getter.Func(func(_ context.Context, key string) ([]byte, error) { return []byte("v:" + key), nil }), nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// A request whose body the node refuses gets its answer, then the
// connection is closed: the node does not wait for the rest of the body
// (net/http would drain up to 256 KiB, holding the connection until
// ReadTimeout for a caller that never sends it).
func TestRefusedBodyClosesTheConnection(t *testing.T) {
	strict, _ := serve(t, NewServer("", newTestPool(t, &PoolOptions{}), nil))
	lenient, _ := serve(t, NewServer("", newTestPool(t, &PoolOptions{Cluster: Cluster{MaxValueBytes: 100}, UnsignedWrites: true}), nil))
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

// dialGet opens a connection to addr and sends a GET of path on it.
func dialGet(t *testing.T, addr, path string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	get(t, c, path)
	return c, bufio.NewReader(c)
}

// get sends a GET of path on c.
func get(t *testing.T, c net.Conn, path string) {
	t.Helper()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: node\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
}

// readStatus reads a response from r, within a bound (not a timing
// assertion), and returns its status, or 0 and the error.
func readStatus(c net.Conn, r *bufio.Reader) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, err
}

// With MaxConns 2 and two requests in progress, a third connection is not
// served until one of the two closes; then it is.
func TestMaxConnsHoldsTheNextConnection(t *testing.T) {
	entered := make(chan struct{}, 2)
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			entered <- struct{}{}
			<-releaseA
		case "/b":
			entered <- struct{}{}
			<-releaseB
		default:
			select {
			case <-releaseA:
			default:
				t.Error("the third connection was served while the two others held both slots")
			}
		}
	})
	addr, ln := serve(t, NewServer("", h, &ServerOptions{MaxConns: 2}))
	a, ra := dialGet(t, addr, "/a")
	b, rb := dialGet(t, addr, "/b")
	for range 2 {
		select {
		case <-entered:
		case <-time.After(10 * time.Second): // a bound, not a timing assertion
			t.Fatal("the first two requests were not served")
		}
	}
	c, rc := dialGet(t, addr, "/c")
	testkit.WaitFor(t, "the third connection to be taken off the socket", func() bool { return ln.accepted.Load() == 3 })
	// Time for a server without the cap to serve it (and fail above); the
	// test cannot fail for being slow.
	time.Sleep(50 * time.Millisecond)

	close(releaseA)
	if st, err := readStatus(a, ra); st != 200 {
		t.Fatalf("a: %d, %v", st, err)
	}
	_ = a.Close()
	if st, err := readStatus(c, rc); st != 200 {
		t.Fatalf("the third connection once the first closed: %d, %v", st, err)
	}
	close(releaseB)
	if st, err := readStatus(b, rb); st != 200 {
		t.Fatalf("b: %d, %v", st, err)
	}
}

// At the cap, a new connection does not wait for idle keep-alive
// connections to time out: the longest-idle one is closed to make room.
func TestMaxConnsClosesAnIdleConnectionForANewOne(t *testing.T) {
	addr, _ := serve(t, NewServer("", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), &ServerOptions{MaxConns: 2}))
	a, ra := dialGet(t, addr, "/a")
	if st, err := readStatus(a, ra); st != 200 {
		t.Fatalf("a: %d, %v", st, err)
	}
	b, rb := dialGet(t, addr, "/b")
	if st, err := readStatus(b, rb); st != 200 {
		t.Fatalf("b: %d, %v", st, err)
	}
	// Both are idle and open; a third connection is served.
	c, rc := dialGet(t, addr, "/c")
	if st, err := readStatus(c, rc); st != 200 {
		t.Fatalf("a third connection while two are idle: %d, %v", st, err)
	}
	// One of the idle two was closed for it, the other still serves.
	_ = a.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, errA := ra.ReadByte()
	_ = b.SetReadDeadline(time.Now().Add(10 * time.Second))
	get(t, b, "/b")
	stB, errB := readStatus(b, rb)
	// a went idle first, so it is the one closed, unless the server set
	// the two idle in the other order: then b is closed and a is open.
	if errors.Is(errA, io.EOF) != (stB == 200) {
		t.Fatalf("a: %v, b: %d %v; want one of them closed and the other serving", errA, stB, errB)
	}
}

// Over TLS (HTTP/2 here) the cap and the reclaim of idle connections work
// alike: with MaxConns 1, a second client is served once the first one's
// connection is idle.
func TestMaxConnsOverTLS(t *testing.T) {
	// httptest makes the certificate and a client that trusts it.
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	cfg := ts.TLS.Clone()
	trusting := ts.Client().Transport.(*http.Transport)
	ts.Close()

	srv := NewServer("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Proto) }),
		&ServerOptions{MaxConns: 1})
	srv.TLSConfig = cfg
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.ServeTLS(l, "", ""); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	}()
	defer func() { _ = srv.Close(); <-done }()
	for i := range 2 {
		tr := trusting.Clone()
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr, Timeout: 10 * time.Second} // a bound
		resp, err := hc.Get("https://" + l.Addr().String() + "/")
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		proto, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 200 || string(proto) != "HTTP/2.0" {
			t.Fatalf("client %d: %d %q; want 200 over HTTP/2", i, resp.StatusCode, proto)
		}
	}
}
