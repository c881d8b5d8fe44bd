//go:build !js && !wasip1

package nethttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/getter"
)

// The go-away frame between real nodes on 127.0.0.1: a node that stops
// (Pool.Close, the end of Pool.Drain, the Server's Shutdown)
// answers what it took, and its peers send the rest elsewhere.

// muxRequestFrame returns a GET request frame for path.
func muxRequestFrame(id uint32, path string) []byte {
	f := mux.StartFrame(nil, mux.KindRequest, id)
	f = mux.AppendString(f, http.MethodGet)
	f = mux.AppendString(f, path)
	f, _ = mux.AppendFields(f, nil)
	mux.EndHead(f)
	mux.SetLen(f, 0)
	return f
}

// rawMuxGoAway opens a multiplexed connection to addr by hand, as a node
// that understands the go-away frame.
func rawMuxGoAway(t *testing.T, addr string) (net.Conn, *muxReader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_, _ = io.WriteString(c, "GET "+mux.Path+" HTTP/1.1\r\nHost: "+addr+"\r\nConnection: Upgrade\r\nUpgrade: "+mux.Protocol+
		"\r\n"+mux.Features+": "+mux.GoAway+"\r\n\r\n")
	r := newMuxReader(c)
	resp, err := http.ReadResponse(r.br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v, %v", resp, err)
	}
	return c, r
}

// TestMultiplexGoAwayResendsUntakenRequests: node B closes its Pool while
// a slow request of node A is in flight on their connection. The slow
// request is still answered there; the requests A sends after (before or
// after the go-away reaches it) go over one new connection and get B's
// answers, present and missing, with no error. Before the go-away they
// waited on the old connection, which B no longer read, and failed when
// it closed.
func TestMultiplexGoAwayResendsUntakenRequests(t *testing.T) {
	noLeaks(t)
	src := newMuxSource()
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(src.release) }) }
	defer release()
	nodes := startMuxCluster(t, 2, src, PoolOptions{}, nil)
	a, b := nodes[0], nodes[1]
	slow := ownedKeys(nodes, 1, 1, "slow")[0]
	keys := ownedKeys(nodes, 1, 16, "k")
	missing := ownedKeys(nodes, 1, 4, "missing")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	peer, _ := a.pool.PickPeer(slow)
	slowErr := make(chan error, 1)
	go func() {
		v, _, err := peerGet(ctx, peer, "g", slow)
		if err == nil && string(v) != "v:"+slow {
			err = fmt.Errorf("wrong value %q", v)
		}
		slowErr <- err
	}()
	<-src.started
	_ = b.pool.Close()

	errs := make(chan error, len(keys)+len(missing))
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() {
			v, _, err := peerGet(ctx, peer, "g", k)
			if err == nil && string(v) != "v:"+k {
				err = fmt.Errorf("Get(%s) = %q: wrong value", k, v)
			}
			errs <- err
		})
	}
	for _, k := range missing {
		wg.Go(func() {
			if _, _, err := peerGet(ctx, peer, "g", k); !errors.Is(err, getter.ErrNotFound) {
				errs <- fmt.Errorf("Get(%s) = %v; want not found", k, err)
				return
			}
			errs <- nil
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a hang guard, not a measurement
		release()
		<-done
		t.Fatal("requests sent after B went away waited for the old connection's slow request")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	release()
	if err := <-slowErr; err != nil {
		t.Fatalf("the request in flight when B went away: %v", err)
	}
	if n := b.ln.accepts.Load(); n != 2 {
		t.Errorf("B accepted %d connections; want 2 (the first, and one new one for the requests it did not take)", n)
	}
}

// TestMultiplexPeerStopsUnderTraffic: 16 callers of node A fetch keys of
// node B (present and missing) while B stops, three ways. Through a Pool
// Close and the end of a drain no request fails; after the drain the
// requests go over HTTP/1.1 (B takes no new multiplexed connection).
// Once B's Server shuts down (its listener closed), a request can fail to
// reach B (a dial refused, a connection never accepted reset), but none
// fails because a multiplexed connection it was sent on was lost, and no
// value is wrong. Before the go-away, requests on the connection
// failed as "connection lost" each time.
func TestMultiplexPeerStopsUnderTraffic(t *testing.T) {
	for _, how := range []string{"pool close", "drain end", "server shutdown"} {
		t.Run(how, func(t *testing.T) {
			noLeaks(t)
			src := newMuxSource()
			nodes := startMuxCluster(t, 2, src, PoolOptions{DrainFor: 20 * time.Millisecond}, nil)
			a, b := nodes[0], nodes[1]
			keys := ownedKeys(nodes, 1, 48, "k")
			missing := ownedKeys(nodes, 1, 16, "missing")
			peer, _ := a.pool.PickPeer(keys[0])
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()

			var done, refused atomic.Int64
			var closed atomic.Bool // B's listener is closed: a dial may fail
			var mu sync.Mutex
			var failures []error
			fail := func(err error) {
				mu.Lock()
				if len(failures) < 5 {
					failures = append(failures, err)
				}
				mu.Unlock()
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Go(func() {
					for i := range 20000 {
						select {
						case <-stop:
							return
						default:
						}
						k, miss := keys[(w*7+i)%len(keys)], i%4 == 0
						if miss {
							k = missing[(w+i)%len(missing)]
						}
						v, _, err := peerGet(ctx, peer, "g", k)
						var oe *net.OpError
						switch {
						case err == nil && (miss || string(v) != "v:"+k):
							fail(fmt.Errorf("Get(%s) = %q: wrong value", k, v))
						case err == nil, miss && errors.Is(err, getter.ErrNotFound):
						case closed.Load() && errors.As(err, &oe) && !errors.Is(err, mux.ErrLost):
							// B's listener is closed: a dial is refused, or a
							// connection the kernel took but B's Server never
							// accepted is reset (over HTTP/1.1 as well).
							refused.Add(1)
						default:
							fail(fmt.Errorf("Get(%s): %w", k, err))
						}
						done.Add(1)
					}
				})
			}
			// progress waits until n more requests have ended (or the
			// callers have stopped, or a hang guard passes).
			progress := func(n int64) {
				t.Helper()
				want := done.Load() + n
				for deadline := time.Now().Add(30 * time.Second); done.Load() < want; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("no progress: %d requests of %d", done.Load(), want)
					}
				}
			}
			progress(500)
			switch how {
			case "pool close":
				_ = b.pool.Close()
				progress(1000)
			case "drain end":
				if err := b.pool.Drain(ctx); err != nil {
					t.Fatal(err)
				}
				before := b.ln.accepts.Load()
				progress(1000)
				if b.ln.accepts.Load() == before {
					t.Error("no new connection after the drain: the requests are still multiplexed")
				}
				closed.Store(true)
				_ = b.srv.Shutdown(ctx)
				progress(200)
			case "server shutdown":
				closed.Store(true)
				_ = b.srv.Shutdown(ctx)
				progress(1000)
			}
			close(stop)
			wg.Wait()
			for _, err := range failures {
				t.Error(err)
			}
			t.Logf("%d requests, %d refused after the listener closed", done.Load(), refused.Load())
		})
	}
}

// TestMultiplexGoAwayFrame: a node that understands the go-away gets one,
// naming the last request taken; that request is answered, the requests
// it sends after are dropped (never loaded, never answered) even if it
// goes on sending them, and the connection ends. An older node (no
// feature in its upgrade) gets no go-away frame, which it would not
// know: its request is answered, then the connection closes, as before.
func TestMultiplexGoAwayFrame(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("older client %v", old), func(t *testing.T) {
			noLeaks(t)
			src := newMuxSource()
			pool, _, addr := startMuxServer(t, src, 0)
			var c net.Conn
			var r *muxReader
			if old {
				c, r = rawMux(t, addr)
			} else {
				c, r = rawMuxGoAway(t, addr)
			}
			if _, err := c.Write(muxRequestFrame(1, "/_geecache/g/slow-1")); err != nil {
				t.Fatal(err)
			}
			<-src.started
			_ = pool.Close()
			_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang fails the test by this
			var wg sync.WaitGroup
			if !old {
				if kind, _, last, _, _, err := r.next(); err != nil || kind != mux.KindGoAway || last != 1 {
					t.Fatalf("after the Pool's Close: kind %d last %d, %v; want a go-away naming request 1", kind, last, err)
				}
				wg.Go(func() { // a client that ignores it and goes on sending
					for id := uint32(2); id < 10000; id++ {
						if _, err := c.Write(muxRequestFrame(id, fmt.Sprintf("/_geecache/g/k-%d", id))); err != nil {
							return
						}
					}
				})
			}
			close(src.release)
			kind, id, status, _, body, err := r.next()
			if err != nil || kind != mux.KindAnswer || id != 1 || status != http.StatusOK || string(body) != "v:slow-1" {
				t.Fatalf("frame: kind %d id %d status %d %q, %v; want the answer to request 1", kind, id, status, body, err)
			}
			if kind, id, _, _, _, err := r.next(); err == nil {
				t.Fatalf("frame kind %d id %d after the last answer; want the connection's end", kind, id)
			}
			_ = c.Close()
			wg.Wait()
			if n := src.loads.Load(); n != 1 {
				t.Errorf("%d loads; want 1 (requests sent after the go-away are not taken)", n)
			}
		})
	}
}

// TestMultiplexDrainedNodeRefusesUpgrade: once its drain has ended, a node
// answers an upgrade as a plain request (no 101), so that its peers ask
// it over HTTP/1.1, which its Server's Shutdown finishes; before the
// drain's end it takes the upgrade.
func TestMultiplexDrainedNodeRefusesUpgrade(t *testing.T) {
	noLeaks(t)
	src := newMuxSource()
	nodes := startMuxCluster(t, 2, src, PoolOptions{DrainFor: time.Millisecond}, nil)
	b := nodes[1]
	addr := strings.TrimPrefix(b.addr, "http://")
	upgrade := func() int {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		_, _ = io.WriteString(c, "GET "+mux.Path+" HTTP/1.1\r\nHost: "+addr+"\r\nConnection: Upgrade\r\nUpgrade: "+mux.Protocol+
			"\r\n"+mux.Features+": "+mux.GoAway+"\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := upgrade(); code != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade before the drain: %d; want 101", code)
	}
	if err := b.pool.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	if code := upgrade(); code == http.StatusSwitchingProtocols {
		t.Fatal("upgrade after the drain's end: 101; want it answered as a plain request")
	}
	// The peers' requests still get answers, over HTTP/1.1.
	k := ownedKeys(nodes, 1, 1, "k")[0]
	peer, _ := nodes[0].pool.PickPeer(k)
	if v, _, err := peerGet(t.Context(), peer, "g", k); err != nil || string(v) != "v:"+k {
		t.Fatalf("Get(%s) after B's drain = %q, %v", k, v, err)
	}
}
