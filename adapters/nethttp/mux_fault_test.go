//go:build !js && !wasip1

package nethttp

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Multiplexed connections to peers that lie, flood, hang or go away, and
// their place in the Server's shutdown and connection cap.

// A muxReader reads frames, for the tests' own ends of connections.
type muxReader struct{ br *bufio.Reader }

func newMuxReader(c net.Conn) *muxReader { return &muxReader{br: bufio.NewReader(c)} }

// next reads a frame: an answer's status and fields, or a request's
// (status 0; its method and path are dropped); of a go-away, the last id
// it names in status.
func (r *muxReader) next() (kind byte, id uint32, status int, h http.Header, body []byte, err error) {
	n, kind, id, err := mux.ReadHeader(r.br)
	if err != nil {
		return 0, 0, 0, nil, nil, err
	}
	payload, err := mux.ReadPayload(r.br, n)
	if err != nil || kind == mux.KindCancel {
		return kind, id, 0, nil, nil, err
	}
	if kind == mux.KindGoAway {
		if len(payload) != 4 {
			return kind, id, 0, nil, nil, mux.ErrFrame
		}
		return kind, id, int(binary.BigEndian.Uint32(payload)), nil, nil, nil
	}
	head, body, err := mux.Split(payload)
	if err != nil {
		return 0, 0, 0, nil, nil, err
	}
	if kind == mux.KindRequest {
		head.Text()
		head.Text()
	} else {
		status = head.Uint16()
	}
	h = head.Fields()
	return kind, id, status, h, body, head.Err
}

// startFakeMuxPeer starts a peer on 127.0.0.1 that accepts the upgrade
// and then hands each connection to behave.
func startFakeMuxPeer(t *testing.T, behave func(c net.Conn, r *muxReader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				r := newMuxReader(c)
				if _, err := http.ReadRequest(r.br); err != nil {
					return
				}
				_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: "+mux.Protocol+"\r\n\r\n")
				behave(c, r)
				_, _ = io.Copy(io.Discard, c) // until the client closes
			})
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

// answerHead returns the start of an answer frame to id, announcing a
// payload of n bytes after the frame header.
func answerHead(kind byte, id uint32, n uint32) []byte {
	b := binary.BigEndian.AppendUint32(nil, n)
	b = append(b, kind)
	return binary.BigEndian.AppendUint32(b, id)
}

// muxClientGroup returns a group of a client-only Pool with Multiplex
// whose one peer is addr; its source answers "local:"+key (not found for
// "missing…").
func muxClientGroup(t *testing.T, addr string, opts PoolOptions, policy cache.PeerPolicy) *cache.Group {
	t.Helper()
	opts.Multiplex = true
	opts.Logger = slog.New(slog.DiscardHandler)
	reg := cache.NewRegistry()
	pool, err := NewPool("", reg, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close() })
	mustSet(t, pool, addr)
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if strings.HasPrefix(key, "missing") {
			return nil, getter.ErrNotFound
		}
		return []byte("local:" + key), nil
	})
	g, err := reg.NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: pool, Logger: opts.Logger, PeerPolicy: policy})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkLocal checks that a present and a missing key get the local load's
// answers from g.
func checkLocal(t *testing.T, ctx context.Context, g *cache.Group, key string) {
	t.Helper()
	if v, err := g.Get(ctx, key); err != nil || v.String() != "local:"+key {
		t.Fatalf("Get(%s) = %q, %v; want the local load's value", key, v.String(), err)
	}
	if _, err := g.Get(ctx, "missing"+key); !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("Get(missing%s) = %v; want ErrNotFound from the local load", key, err)
	}
}

// TestMultiplexFloodingPeer: a peer that answers every request frame with
// a huge announced length, endless 102s, garbage, or a value that fails
// its checksum costs a bounded amount of memory (allocated in all, not
// only live: endless 102s cost 90 MiB here before a request was allowed
// no more than 5, as net/http allows) and an error the group recovers
// from with its own load: never a wrong value.
func TestMultiplexFloodingPeer(t *testing.T) {
	noLeaks(t)
	floods := map[string]func(c net.Conn, id uint32){
		"huge length": func(c net.Conn, id uint32) { _, _ = c.Write(answerHead(mux.KindAnswer, id, 0xffffffff)) },
		"endless 102": func(c net.Conn, id uint32) {
			f := answerHead(mux.KindInterim, id, 8)
			f = append(f, 0, 0, 0, 4, 0, 102, 0, 0)
			big := []byte(strings.Repeat(string(f), 1024))
			for {
				if _, err := c.Write(big); err != nil {
					return
				}
			}
		},
		"garbage": func(c net.Conn, _ uint32) {
			_, _ = c.Write([]byte(strings.Repeat("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 100)))
		},
		"wrong checksum": func(c net.Conn, id uint32) {
			f := mux.StartFrame(nil, mux.KindAnswer, id)
			f = append(f, 0, 200)
			f, _ = mux.AppendFields(f, http.Header{"X-Geecache-Checksum": {"xxh64=0000000000000000"}, "X-Geecache-Version": {"2"}})
			mux.EndHead(f)
			f = append(f, "wrong"...)
			mux.SetLen(f, 0)
			_, _ = c.Write(f)
		},
	}
	for name, flood := range floods {
		t.Run(name, func(t *testing.T) {
			addr := startFakeMuxPeer(t, func(c net.Conn, r *muxReader) {
				for {
					kind, id, _, _, _, err := r.next()
					if err != nil {
						return
					}
					if kind == mux.KindRequest {
						go flood(c, id)
					}
				}
			})
			g := muxClientGroup(t, addr, PoolOptions{Timeout: time.Hour},
				cache.PeerPolicy{HedgeMax: 50 * time.Millisecond, SlowAfter: 50 * time.Millisecond})
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a Get that waited for the timeout fails by this
			defer cancel()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for _, k := range []string{"k1", "k2", "k3"} {
				checkLocal(t, ctx, g, k)
			}
			runtime.ReadMemStats(&after)
			if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
				t.Errorf("%d MiB allocated for 6 Gets", d>>20)
			}
			if s := g.Stats(); s.PeerLoads != 0 {
				t.Errorf("%d values taken from the flooding peer", s.PeerLoads)
			}
		})
	}
}

// TestMultiplexPeerHangsMidFrame: a peer that sends the start of an
// answer and stops is cut by the request's context (the Client's Get
// returns its error) and by the hedge (the group's Get returns the local
// load's value), never held until the client's timeout.
func TestMultiplexPeerHangsMidFrame(t *testing.T) {
	noLeaks(t)
	addr := startFakeMuxPeer(t, func(c net.Conn, r *muxReader) {
		for {
			kind, id, _, _, _, err := r.next()
			if err != nil {
				return
			}
			if kind == mux.KindRequest {
				f := answerHead(mux.KindAnswer, id, 1000)
				_, _ = c.Write(append(f, 0, 0, 0, 2)) // 4 bytes of 1000, then nothing
			}
		}
	})
	g := muxClientGroup(t, addr, PoolOptions{Timeout: time.Hour}, cache.PeerPolicy{HedgeMax: 50 * time.Millisecond, SlowAfter: 50 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	checkLocal(t, ctx, g, "k1")

	reg := cache.NewRegistry()
	pool, err := NewPool("", reg, &PoolOptions{Multiplex: true, Timeout: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	mustSet(t, pool, addr)
	peer, _ := pool.PickPeer("k2")
	rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer rcancel()
	if _, _, err := peerGet(rctx, peer, "g", "k2"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get from a peer hung mid-frame: %v; want the context's deadline", err)
	}
}

// TestMultiplexShutdownAndClose: a multiplexed connection is closed by
// the Server's Shutdown, by its Close and by the Pool's Close; a client
// that understands the go-away gets one first, naming no request (none
// was taken), an older client only the end.
func TestMultiplexShutdownAndClose(t *testing.T) {
	noLeaks(t)
	for _, how := range []string{"shutdown", "server close", "pool close", "shutdown, go-away", "server close, go-away", "pool close, go-away"} {
		t.Run(how, func(t *testing.T) {
			pool, srv, addr := startMuxServer(t, nil, 0)
			c, r := rawMux(t, addr)
			goaway := strings.HasSuffix(how, ", go-away")
			if goaway {
				c, r = rawMuxGoAway(t, addr)
				how = strings.TrimSuffix(how, ", go-away")
			}
			switch how {
			case "shutdown":
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				_ = srv.Shutdown(ctx)
			case "server close":
				_ = srv.Close()
			case "pool close":
				_ = pool.Close()
			}
			_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a connection left open fails the test by this
			if goaway {
				if kind, _, last, _, _, err := r.next(); err != nil || kind != mux.KindGoAway || last != 0 {
					t.Fatalf("after %s: kind %d last %d, %v; want a go-away naming no request", how, kind, last, err)
				}
			}
			if _, _, _, _, _, err := r.next(); !errors.Is(err, io.EOF) {
				t.Fatalf("read after %s: %v; want the connection closed", how, err)
			}
		})
	}
}

// startMuxServer serves a Pool (group "g" on src, if not nil) with a
// Server whose MaxConns is maxConns, on 127.0.0.1.
func startMuxServer(t *testing.T, src getter.Getter, maxConns int) (*Pool, *Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveMux(t, ln, src, maxConns)
}

// serveMux is startMuxServer on ln.
func serveMux(t *testing.T, ln net.Listener, src getter.Getter, maxConns int) (*Pool, *Server, string) {
	t.Helper()
	return serveMuxWith(t, ln, src, maxConns, nil)
}

// serveMuxWith is serveMux, with configure (if not nil) called on the
// Pool before the Server starts.
func serveMuxWith(t *testing.T, ln net.Listener, src getter.Getter, maxConns int, configure func(*Pool)) (*Pool, *Server, string) {
	t.Helper()
	reg := cache.NewRegistry()
	quiet := slog.New(slog.DiscardHandler)
	pool, err := NewPool("http://"+ln.Addr().String(), reg, &PoolOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if configure != nil {
		configure(pool)
	}
	if src != nil {
		if _, err := reg.NewGroup("g", 1<<20, src, &cache.GroupOptions{Logger: quiet}); err != nil {
			t.Fatal(err)
		}
	}
	srv := NewServer("", pool, &ServerOptions{MaxConns: maxConns})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() { _ = srv.Close(); <-done; _ = pool.Close() })
	return pool, srv, ln.Addr().String()
}

// TestMultiplexMaxConns: a multiplexed connection holds its slot of
// ServerOptions.MaxConns: while it has a request in flight, no other
// connection is served; once it is idle, it is closed to make room for a
// new one, as an idle keep-alive connection is.
func TestMultiplexMaxConns(t *testing.T) {
	noLeaks(t)
	src := newMuxSource()
	_, _, addr := startMuxServer(t, src, 1)
	c, r := rawMux(t, addr)
	f := mux.StartFrame(nil, mux.KindRequest, 1)
	f = mux.AppendString(f, http.MethodGet)
	f = mux.AppendString(f, "/_geecache/g/slow-1")
	f, _ = mux.AppendFields(f, nil)
	mux.EndHead(f)
	mux.SetLen(f, 0)
	if _, err := c.Write(f); err != nil {
		t.Fatal(err)
	}
	<-src.started // busy

	hc := &http.Client{Transport: &http.Transport{}, Timeout: 200 * time.Millisecond}
	defer hc.CloseIdleConnections()
	if resp, err := hc.Get("http://" + addr + "/_geecache/g/k"); err == nil {
		_ = resp.Body.Close()
		t.Fatalf("a second connection was served (%d) beside a busy multiplexed one with MaxConns 1", resp.StatusCode)
	}
	close(src.release)
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	if kind, id, status, _, body, err := r.next(); err != nil || kind != mux.KindAnswer || id != 1 || status != http.StatusOK || string(body) != "v:slow-1" {
		t.Fatalf("answer: kind %d id %d status %d %q, %v", kind, id, status, body, err)
	}
	// Idle now: a new connection gets its slot.
	hc.Timeout = time.Minute
	resp, err := hc.Get("http://" + addr + "/_geecache/g/k")
	if err != nil {
		t.Fatalf("a connection beside an idle multiplexed one: %v", err)
	}
	_ = resp.Body.Close()
	if _, _, _, _, _, err := r.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("the idle multiplexed connection: %v; want it closed to make room", err)
	}
}
