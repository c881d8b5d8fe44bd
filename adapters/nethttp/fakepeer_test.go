//go:build !js

package nethttp

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
)

// A fakePeer is a listener on 127.0.0.1 (an OS-picked port) that answers
// each connection's requests with answer, whatever a GeeCache node would.
// Cleanup closes the listener and every connection, and waits for the
// connection goroutines to return.
type fakePeer struct {
	addr   string
	ln     net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed chan struct{} // one value each time a client closes a connection
}

// startFakePeer starts a fake peer. answer gets each request, once its
// header is read, and the raw connection; it writes what it likes and
// returns false to stop serving the connection. Once answer has stopped,
// the fake peer waits for the client to close the connection.
func startFakePeer(t *testing.T, answer func(req *http.Request, conn net.Conn) bool) *fakePeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePeer{addr: "http://" + ln.Addr().String(), ln: ln, conns: map[net.Conn]bool{}, closed: make(chan struct{}, 1024)}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns[conn] = true
			p.mu.Unlock()
			p.wg.Add(1)
			go p.serve(conn, answer)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *fakePeer) serve(conn net.Conn, answer func(*http.Request, net.Conn) bool) {
	defer p.wg.Done()
	r := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(r)
		if err != nil {
			break
		}
		if !answer(req, conn) {
			// Wait for the client to give up on the connection.
			_, _ = io.Copy(io.Discard, r)
			break
		}
	}
	p.mu.Lock()
	delete(p.conns, conn)
	p.mu.Unlock()
	if err := conn.Close(); !errors.Is(err, net.ErrClosed) {
		p.closed <- struct{}{} // the client closed it, not Cleanup
	}
}
