//go:build !js

package nethttp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
)

// A node built with NewServer closes connections whose requests trickle in
// (a slow-loris caller) once its ReadTimeout passes, and meanwhile answers
// its peers.
func TestSlowRequestsAreCutOff(t *testing.T) {
	nodes := nethttptest.Start(t, 1, nil)
	n := nodes[0]
	srv := nethttp.NewServer("", n.Pool, nil)
	srv.ReadHeaderTimeout, srv.ReadTimeout = 200*time.Millisecond, 200*time.Millisecond // short, for the test
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close(); <-done }()

	const slow = 200
	conns := make([]net.Conn, 0, slow)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range slow {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		// Half a request line, then nothing.
		if _, err := io.WriteString(c, "GET /_geecache/scores/k HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// A peer is still answered while they hang on.
	c := nethttp.MustClient(t, "http://"+ln.Addr().String(), nil)
	defer c.CloseIdleConnections()
	if v, _, err := nethttp.PeerGet(context.Background(), c, "scores", "Tom"); err != nil || string(v) != "v:Tom" {
		t.Fatalf("peer request during the slow ones: %q, %v", v, err)
	}
	// Every slow connection is closed by the server (a read sees EOF or a
	// reset), within a bounded wait.
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("slow connection %d still open after 10 s", i)
		}
	}
}
