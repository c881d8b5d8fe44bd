//go:build !js

package nethttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Faults of a peer, each a fake peer on 127.0.0.1. These tests assert
// behaviour (errors, values, allocations, connections closed, goroutines
// back: see TestMain's goleak), never how long anything took: the
// deadlines below only make a broken client fail instead of hang.

// noLeaks makes t fail if goroutines it starts (the fake peer's, the
// client's connections) outlive it; call it first, so that its check runs
// after every other cleanup.
func noLeaks(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// waitClosed waits until the client has closed one connection to p.
func waitClosed(t *testing.T, p *fakePeer) {
	t.Helper()
	select {
	case <-p.closed:
	case <-time.After(30 * time.Second): // a hang guard, not a measurement
		t.Fatal("the client never closed its connection to the stalled peer")
	}
}

// hang reads a request and never answers.
func hang(*http.Request, net.Conn) bool { return false }

func TestPeerThatNeverAnswers(t *testing.T) {
	noLeaks(t)
	p := startFakePeer(t, hang)
	t.Run("caller deadline", func(t *testing.T) {
		c := mustClient(t, p.addr, nil)
		defer c.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		v, _, err := peerGet(ctx, c, "scores", "Tom")
		if v != nil || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() == nil {
			t.Fatalf("Get = %q, %v (ctx err %v); want the caller's deadline error once it has passed", v, err, ctx.Err())
		}
		waitClosed(t, p)
	})
	t.Run("client timeout", func(t *testing.T) {
		c := mustClient(t, p.addr, &ClientOptions{Timeout: 20 * time.Millisecond})
		defer c.CloseIdleConnections()
		v, _, err := peerGet(t.Context(), c, "scores", "Tom")
		if v != nil || !errors.Is(err, context.DeadlineExceeded) || t.Context().Err() != nil {
			t.Fatalf("Get = %q, %v; want the client's timeout", v, err)
		}
		waitClosed(t, p)
	})
}

// rawAnswer returns an answer that writes head (a status line and headers,
// without the blank line) and body, then stalls if stall, or else serves
// the next request.
func rawAnswer(head string, body []byte, stall bool) func(*http.Request, net.Conn) bool {
	return func(_ *http.Request, conn net.Conn) bool {
		_, _ = conn.Write(append([]byte(strings.ReplaceAll(head, "\n", "\r\n")+"\r\n\r\n"), body...))
		return !stall
	}
}

func TestStalledErrorBody(t *testing.T) {
	noLeaks(t)
	t.Run("short", func(t *testing.T) {
		// 100 bytes announced, 7 sent: the caller gets its deadline error
		// at its deadline, not a message and not later.
		p := startFakePeer(t, rawAnswer("HTTP/1.1 500 Internal Server Error\nContent-Length: 100\nX-Geecache-Error: load_error", []byte("partial"), true))
		c := mustClient(t, p.addr, nil)
		defer c.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		v, _, err := peerGet(ctx, c, "scores", "Tom")
		if v != nil || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, protocol.ErrBadResponse) || ctx.Err() == nil {
			t.Fatalf("Get = %q, %v; want a bad response ended by the deadline", v, err)
		}
		waitClosed(t, p)
	})
	t.Run("long", func(t *testing.T) {
		// 1 MiB announced, 5 KiB sent, then a stall: the client reads its
		// 4 KiB and does not wait for the rest (nor drain it). Only the
		// caller's deadline would end a wait, and it has not passed when
		// Get returns.
		p := startFakePeer(t, rawAnswer("HTTP/1.1 500 Internal Server Error\nContent-Length: 1048576\nX-Geecache-Error: load_error",
			[]byte(strings.Repeat("x", 5<<10)), true))
		c := mustClient(t, p.addr, &ClientOptions{Timeout: time.Hour})
		defer c.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		v, _, err := peerGet(ctx, c, "scores", "Tom")
		if v != nil || !errors.Is(err, protocol.ErrLoad) || ctx.Err() != nil {
			t.Fatalf("Get = %q, %v (ctx err %v); want ErrLoad before the deadline", v, err, ctx.Err())
		}
		waitClosed(t, p)
	})
}

// A garbage 200 is never returned. Without a secret the checksum catches
// a peer that is broken or no GeeCache node; a garbage value sent with its
// own checksum takes the secret to catch (see PROTOCOL.md, Integrity).
func TestPeerThatLies(t *testing.T) {
	noLeaks(t)
	const value = "garbage"
	for name, tc := range map[string]struct {
		head   string
		secret []byte
	}{
		"no checksum":          {head: "HTTP/1.1 200 OK\nContent-Length: 7"},
		"wrong checksum":       {head: "HTTP/1.1 200 OK\nContent-Length: 7\nX-Geecache-Checksum: " + protocol.Checksum([]byte("v:Tom"))},
		"malformed checksum":   {head: "HTTP/1.1 200 OK\nContent-Length: 7\nX-Geecache-Checksum: zz"},
		"chunked, no sum":      {head: "HTTP/1.1 200 OK\nTransfer-Encoding: chunked"},
		"own checksum, secret": {head: "HTTP/1.1 200 OK\nContent-Length: 7\nX-Geecache-Checksum: " + protocol.Checksum([]byte(value)), secret: []byte("k")},
		"forged sig, secret":   {head: "HTTP/1.1 200 OK\nContent-Length: 7\nX-Geecache-Checksum: " + protocol.Checksum([]byte(value)) + "\nX-Geecache-Signature: " + strings.Repeat("0", 64), secret: []byte("k")},
	} {
		t.Run(name, func(t *testing.T) {
			head := tc.head
			body := []byte(value)
			if strings.Contains(head, "chunked") {
				body = []byte("7\r\n" + value + "\r\n0\r\n\r\n")
			}
			p := startFakePeer(t, rawAnswer(head, body, false))
			c := mustClient(t, p.addr, &ClientOptions{Secret: tc.secret})
			defer c.CloseIdleConnections()
			v, _, err := peerGet(t.Context(), c, "scores", "Tom")
			if v != nil || !errors.Is(err, cache.ErrIntegrity) || !errors.Is(err, protocol.ErrBadResponse) {
				t.Fatalf("Get = %q, %v; want no value and ErrIntegrity", v, err)
			}
		})
	}
}

func TestForgedNotFound(t *testing.T) {
	noLeaks(t)
	msg := []byte("Tom not exist\n")
	head := "HTTP/1.1 404 Not Found\nContent-Length: 14\nX-Geecache-Error: not_found\nX-Geecache-Checksum: " + protocol.Checksum(msg)
	secret := []byte("cluster secret")
	forgedSig := strings.Repeat("ab", 32)
	for name, tc := range map[string]struct {
		head         string
		secret       []byte
		wantNotFound bool
	}{
		"unsigned, no secret":  {head, nil, true}, // without a secret nothing is authenticated
		"unsigned, secret":     {head, secret, false},
		"forged sig, secret":   {head + "\nX-Geecache-Signature: " + forgedSig, secret, false},
		"no checksum, secret":  {"HTTP/1.1 404 Not Found\nContent-Length: 14\nX-Geecache-Error: not_found", secret, false},
		"no checksum, no auth": {"HTTP/1.1 404 Not Found\nContent-Length: 14\nX-Geecache-Error: not_found", nil, true}, // a version 1 node
	} {
		t.Run(name, func(t *testing.T) {
			p := startFakePeer(t, rawAnswer(tc.head, msg, false))
			c := mustClient(t, p.addr, &ClientOptions{Secret: tc.secret})
			defer c.CloseIdleConnections()
			v, _, err := peerGet(t.Context(), c, "scores", "Tom")
			if v != nil || errors.Is(err, getter.ErrNotFound) != tc.wantNotFound {
				t.Fatalf("Get = %q, %v; want not found: %v", v, err, tc.wantNotFound)
			}
			if !tc.wantNotFound && !errors.Is(err, cache.ErrIntegrity) {
				t.Fatalf("err = %v; want ErrIntegrity", err)
			}
		})
	}
}

// allocsPerGet returns the bytes allocated per c.Get(ctx, …) over n calls
// (by the whole process, fake peer included). Each call must fail with an
// error for which fails is true or, if fails is nil, return want.
func allocsPerGet(t *testing.T, c *Client, n int, timeout time.Duration, fails func(error) bool, want []byte) uint64 {
	t.Helper()
	get := func() {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		v, _, err := peerGet(ctx, c, "scores", "Tom")
		if fails != nil && (v != nil || !fails(err)) || fails == nil && (err != nil || !bytes.Equal(v, want)) {
			t.Fatalf("Get = %d bytes, %v", len(v), err)
		}
	}
	get() // warm up: the transport, the chunk pool
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		get()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// A peer that announces 64 MiB and sends 1 byte costs the asking node
// under 64 KiB per request, whether it then closes the connection or
// stalls until the caller's deadline.
func TestHugeAnnouncedLength(t *testing.T) {
	noLeaks(t)
	head := fmt.Sprintf("HTTP/1.1 200 OK\nContent-Length: %d\nX-Geecache-Checksum: %s", 64<<20, protocol.Checksum(nil))
	for _, tc := range []struct {
		name    string
		stall   bool
		n       int
		timeout time.Duration
		want    error
	}{
		{"then closes", false, 200, time.Minute, protocol.ErrBadResponse},
		{"then stalls", true, 20, 5 * time.Millisecond, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer := func(_ *http.Request, conn net.Conn) bool {
				_, _ = conn.Write([]byte(strings.ReplaceAll(head, "\n", "\r\n") + "\r\n\r\nx"))
				if !tc.stall {
					_ = conn.(*net.TCPConn).CloseWrite()
				}
				return false
			}
			p := startFakePeer(t, answer)
			c := mustClient(t, p.addr, nil)
			defer c.CloseIdleConnections()
			per := allocsPerGet(t, c, tc.n, tc.timeout, func(err error) bool { return errors.Is(err, tc.want) }, nil)
			t.Logf("%d bytes allocated per request", per)
			if !raceEnabled && per >= 64<<10 {
				t.Fatalf("%d bytes allocated per request for a 1-byte body announced as 64 MiB; want under 64 KiB", per)
			}
		})
	}
}
