//go:build !js && !wasip1

package mux

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
)

// The asking side of the multiplexed carriage (frame.go): the transport
// that keeps one connection per plain-http peer, dials and upgrades it, and
// sends a peer that refused the upgrade's requests over HTTP/1.1.

// A muxTransport is the RoundTripper of a Pool with Multiplex: it sends the
// requests to each plain-http peer over one multiplexed connection (see
// frame.go), opened on the first request, and those to a peer that
// refused the upgrade, or over https, through fallback.
type muxTransport struct {
	fallback http.RoundTripper
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	base     string        // Cluster.BasePath
	maxFrame int64         // the largest answer payload read
	timeout  time.Duration // bounds the dial and upgrade, a stalled frame and a blocked write

	mu      sync.Mutex
	conns   map[string]*muxConn  // by host
	dialing map[string]*muxDial  // by host: the dial one caller makes for all
	refused map[string]time.Time // by host: when the peer refused the upgrade
}

// muxDial is a dial in progress; done is closed when mc or err is set.
type muxDial struct {
	done    chan struct{}
	mc      *muxConn
	refused bool
	err     error
}

// NewTransport returns the RoundTripper of a Pool with Multiplex: it sends
// over fallback the requests to a peer that refuses the upgrade or is
// reached over https; base is Cluster.BasePath, maxValue the largest value
// an answer carries, timeout the bound of a dial and upgrade, of a stalled
// frame and of a blocked write.
func NewTransport(fallback http.RoundTripper, base string, maxValue int64, timeout time.Duration) (http.RoundTripper, error) {
	return newMuxTransport(fallback, base, maxValue, timeout), nil
}

func newMuxTransport(fallback http.RoundTripper, base string, maxValue int64, timeout time.Duration) *muxTransport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	t := &muxTransport{fallback: fallback, dial: d.DialContext, base: base, maxFrame: muxMaxFrame(maxValue), timeout: timeout,
		conns: map[string]*muxConn{}, dialing: map[string]*muxDial{}, refused: map[string]time.Time{}}
	if ht, ok := fallback.(*http.Transport); ok && ht.DialContext != nil {
		t.dial = ht.DialContext // the transport's own way to peers
	}
	return t
}

// RoundTrip sends req over the peer's multiplexed connection, or through
// the fallback transport if the peer does not speak it. A request the
// peer did not take (it went away first, or the connection ended before
// the request was sent) is sent again over a new connection, at most
// muxMaxRetries times, then over HTTP/1.1.
func (t *muxTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		return t.fallback.RoundTrip(req)
	}
	var body []byte
	read := false
	for try := 0; ; try++ {
		mc, err := t.conn(req.Context(), req.URL.Host)
		if errors.Is(err, errUpgradeLost) {
			mc, err = nil, nil // this request goes over HTTP/1.1; the next ones try the upgrade again
		}
		if err != nil {
			return nil, err
		}
		if mc == nil || try == muxMaxRetries {
			if read { // the body is read: send it again
				req = req.Clone(req.Context())
				req.Body, req.ContentLength = http.NoBody, 0
				if len(body) > 0 {
					req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
				}
			}
			return t.fallback.RoundTrip(req)
		}
		if !read {
			if body, err = readBody(req); err != nil {
				return nil, err
			}
			read = true
		}
		resp, err := mc.roundTrip(req, body)
		if !errors.Is(err, errMuxRetry) {
			return resp, err
		}
	}
}

// readBody reads and closes the body of req, if it has one.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	return body, err
}

// conn returns host's connection, dialling it if there is none; nil (and
// no error) if host is to be asked over HTTP/1.1.
func (t *muxTransport) conn(ctx context.Context, host string) (*muxConn, error) {
	t.mu.Lock()
	if mc := t.conns[host]; mc != nil {
		t.mu.Unlock()
		return mc, nil
	}
	if at, ok := t.refused[host]; ok {
		if time.Since(at) < muxRetryUpgrade {
			t.mu.Unlock()
			return nil, nil
		}
		delete(t.refused, host)
	}
	d := t.dialing[host]
	if d == nil {
		d = &muxDial{done: make(chan struct{})}
		t.dialing[host] = d
		// The dial serves every caller waiting for it: it is not ended
		// by this caller's context, only by the transport's timeout.
		go t.dialMux(context.WithoutCancel(ctx), host, d)
	}
	t.mu.Unlock()
	select {
	case <-d.done:
		return d.mc, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// dialMux opens a connection to host, asks for the upgrade and records
// the outcome in d.
func (t *muxTransport) dialMux(ctx context.Context, host string, d *muxDial) {
	ctx, cancel := context.WithTimeout(ctx, min(t.timeout, peerhttp.Timeout))
	defer cancel()
	mc, refused, err := t.open(ctx, host)
	t.mu.Lock()
	delete(t.dialing, host)
	switch {
	case refused:
		t.refused[host] = time.Now()
	case err == nil:
		t.conns[host] = mc
	}
	d.mc, d.refused, d.err = mc, refused, err
	t.mu.Unlock()
	close(d.done)
}

// errUpgradeLost is open's error when the peer ended the connection
// before answering the upgrade: RoundTrip then sends that request over
// HTTP/1.1, which reports the peer's state as it would without Multiplex
// (a refused dial, a stopped server), and does not mark the peer as one
// that refuses the upgrade.
var errUpgradeLost = errors.New("multiplexed connection: upgrade: connection ended before the answer")

// open dials host and upgrades the connection; refused reports that the
// peer answered without switching (an older node).
func (t *muxTransport) open(ctx context.Context, host string) (mc *muxConn, refused bool, err error) {
	c, err := t.dial(ctx, "tcp", host)
	if err != nil {
		return nil, false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	_, err = io.WriteString(c, "GET "+t.base+Path+" HTTP/1.1\r\nHost: "+host+
		"\r\nConnection: Upgrade\r\nUpgrade: "+Protocol+"\r\n"+Features+": "+GoAway+", "+Interims+"\r\n\r\n")
	br := bufio.NewReader(c) // for the answer; the frames get their own buffer (read)
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(br, nil)
	}
	if err != nil {
		_ = c.Close()
		if ctx.Err() == nil {
			// The peer closed or reset the connection before it answered
			// the upgrade (a server shutting down closes new connections):
			// no request was sent on it.
			return nil, false, fmt.Errorf("%w: %w", errUpgradeLost, err)
		}
		return nil, false, fmt.Errorf("multiplexed connection: upgrade: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || !strings.EqualFold(resp.Header.Get("Upgrade"), Protocol) {
		_ = resp.Body.Close()
		_ = c.Close()
		return nil, true, nil
	}
	if !stop() {
		_ = c.Close()
		return nil, false, fmt.Errorf("multiplexed connection: upgrade: %w", ctx.Err())
	}
	_ = c.SetDeadline(time.Time{})
	mc = &muxConn{t: t, host: host, frameWriter: frameWriter{c: c, timeout: t.timeout}, slots: make(chan struct{}, MaxInFlight),
		calls: map[uint32]*muxCall{}, done: make(chan struct{}), born: time.Now()}
	mc.idle = time.AfterFunc(muxIdleTimeout, mc.idleCheck)
	go mc.read(br)
	return mc, false, nil
}

// CloseIdleConnections closes the fallback transport's idle connections
// and every multiplexed one: at once if it has no request in flight, else
// when its last one ends. New requests open new connections.
func (t *muxTransport) CloseIdleConnections() {
	peerhttp.CloseIdle(t.fallback)
	t.mu.Lock()
	conns := t.conns
	t.conns = map[string]*muxConn{}
	clear(t.refused)
	t.mu.Unlock()
	for _, mc := range conns {
		mc.closeWhenIdle()
	}
}

// forget removes mc from the connections new requests use.
func (t *muxTransport) forget(mc *muxConn) {
	t.mu.Lock()
	if t.conns[mc.host] == mc {
		delete(t.conns, mc.host)
	}
	t.mu.Unlock()
}
