package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/bench/internal/fair"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// fxFake is a listener on 127.0.0.1 that answers every request with
// answer, which writes what it likes on the connection and returns false
// to stop serving it (the connection is then closed once the client
// closes it, or at once if closeAfter).
type fxFake struct {
	addr string
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	open map[net.Conn]bool
}

func startFxFake(tb testing.TB, closeAfter bool, answer func(net.Conn) bool) *fxFake {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	f := &fxFake{addr: "http://" + ln.Addr().String(), ln: ln, open: map[net.Conn]bool{}}
	f.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.open[c] = true
			f.mu.Unlock()
			f.wg.Go(func() { f.serve(c, closeAfter, answer) })
		}
	})
	tb.Cleanup(func() {
		_ = ln.Close()
		f.mu.Lock()
		for c := range f.open {
			_ = c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *fxFake) serve(c net.Conn, closeAfter bool, answer func(net.Conn) bool) {
	r := bufio.NewReader(c)
	for {
		if _, err := http.ReadRequest(r); err != nil {
			break
		}
		if !answer(c) {
			if !closeAfter {
				_, _ = io.Copy(io.Discard, r) // until the client gives up
			}
			break
		}
	}
	f.mu.Lock()
	delete(f.open, c)
	f.mu.Unlock()
	_ = c.Close()
}

// fxHugeHeader announces a 64 MiB value (the default size limit, so the
// client accepts the announcement) with a checksum (X-Geecache-Checksum,
// adapters/PROTOCOL.md), and sends one byte.
const fxHugeHeader = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n" +
	"X-Geecache-Checksum: 0123456789abcdef\r\nContent-Length: 67108864\r\n\r\nx"

// fxStallFor bounds each request to the peer that stalls after one byte.
const fxStallFor = 5 * time.Millisecond

// fxClientSystem is n Gets of key with a nethttp.Client to addr, each
// bounded by per (0: none); wantErr says whether they must fail.
func fxClientSystem(tb testing.TB, name, addr string, per time.Duration, wantErr bool) fair.System {
	c, err := nethttp.NewClient(addr, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.CloseIdleConnections)
	return fair.System{Name: name, Run: func(n int) fair.Metrics {
		for range n {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if per > 0 {
				ctx, cancel = context.WithTimeout(ctx, per)
			}
			v, _, err := askPeer(ctx, c, cache.OpGet, fxGroup, "k")
			cancel()
			if (err != nil) != wantErr || (err == nil && v.Len() != 1) {
				tb.Fatalf("%s: Get = %d bytes, %v", name, v.Len(), err)
			}
		}
		return nil
	}}
}

// BenchmarkHugeLength measures what a request to a peer that announces a
// 64 MiB value and sends 1 byte costs the asking side's nethttp.Client,
// in alternating blocks with a request to an honest node answering a
// 1-byte value: liar-close closes the connection after the byte (the read
// fails at once), liar-stall keeps it open (each request is bounded by a
// 5 ms context). Metrics per request: B/op and allocs/op from
// runtime.MemStats (the whole process: the client, and the fake peer's or
// the node's serving side), ns/op.
func BenchmarkHugeLength(b *testing.B) {
	closeLiar := startFxFake(b, true, func(c net.Conn) bool {
		_, _ = io.WriteString(c, fxHugeHeader)
		return false
	})
	stallLiar := startFxFake(b, false, func(c net.Conn) bool {
		_, _ = io.WriteString(c, fxHugeHeader)
		return false
	})
	one := getter.Func(func(context.Context, string) ([]byte, error) { return []byte{'x'}, nil })
	honest := newFxCluster(b, 1, fxConfig{getter: one})
	fair.Run(b, fair.Options{Baseline: "honest", Mem: true, GC: true},
		fxClientSystem(b, "honest", honest.nodes[0].addr, 0, false),
		fxClientSystem(b, "liar-close", closeLiar.addr, 0, true),
		fxClientSystem(b, "liar-stall", stallLiar.addr, fxStallFor, true))
}

// fxSlowConns is the number of slow-body connections of BenchmarkSlowBodies.
const fxSlowConns = 1000

// fxSlowReadTimeout is the ReadTimeout (and ReadHeaderTimeout) of the node
// under slow bodies, shorter than the 10 s ReadTimeout of nethttp.NewServer for the run.
const fxSlowReadTimeout = time.Second

// fxSlowBody opens a connection to addr and sends a PUT announcing a
// 1000-byte body and one byte of it, then nothing; it returns how long
// after the request was sent the server closed the connection (or -1 if
// it had not within wait), and signals sent once the request is out.
func fxSlowBody(addr string, wait time.Duration, sent func()) time.Duration {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		sent()
		return -1
	}
	defer c.Close()
	_, err = io.WriteString(c, "PUT /_geecache/"+fxGroup+"/k HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nx")
	t0 := time.Now()
	sent()
	if err != nil {
		return -1
	}
	_ = c.SetReadDeadline(t0.Add(wait))
	_, err = io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return -1
	}
	return time.Since(t0)
}

// fxSlowSystem is n Gets of fresh keys from node A of c by a peer's
// nethttp.Client, one at a time; with slow, fxSlowConns slow-body
// connections are opened first and held during the Gets, and the block
// waits (at most 10 s past the ReadTimeout) until the node has closed
// them all.
func fxSlowSystem(b *testing.B, name string, c *fxCluster, round *atomic.Int64, slow bool) fair.System {
	cl, err := nethttp.NewClient(c.nodes[0].addr, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cl.CloseIdleConnections)
	addr := c.nodes[0].addr[len("http://"):]
	return fair.System{Name: name, Run: func(n int) fair.Metrics {
		r := round.Add(1)
		closed := make([]time.Duration, fxSlowConns)
		var sent, done sync.WaitGroup
		if slow {
			sent.Add(fxSlowConns)
			for i := range fxSlowConns {
				done.Go(func() { closed[i] = fxSlowBody(addr, fxSlowReadTimeout+10*time.Second, sent.Done) })
			}
			sent.Wait()
		}
		t0 := time.Now()
		lat := make([]time.Duration, n)
		failed := 0
		for i := range n {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			s := time.Now()
			_, _, err := askPeer(ctx, cl, cache.OpGet, fxGroup, fmt.Sprintf("s%d/k%d", r, i))
			lat[i] = time.Since(s)
			cancel()
			if err != nil {
				failed++
			}
		}
		gets := time.Since(t0)
		done.Wait()
		m := fair.Metrics{
			"ns/op":        float64(gets.Nanoseconds()) / float64(n),
			"get-p99-ns":   float64(fxPercentile(fxSorted(lat), 99)),
			"get-failures": float64(failed),
		}
		if slow {
			var shut []time.Duration
			for _, d := range closed {
				if d >= 0 {
					shut = append(shut, d)
				}
			}
			shut = fxSorted(shut)
			m["not-closed"] = float64(fxSlowConns - len(shut))
			m["p50-close-ns"] = float64(fxPercentile(shut, 50))
			m["max-close-ns"] = float64(fxPercentile(shut, 100))
			m["gets-within-read-timeout"] = boolMetric(gets < fxSlowReadTimeout)
		}
		return m
	}}
}

func boolMetric(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// BenchmarkSlowBodies opens fxSlowConns connections to a node served by
// nethttp.NewServer (ReadTimeout set to fxSlowReadTimeout for the run),
// each sending a PUT that announces a body and sends one byte of it, and
// meanwhile gets fresh keys from the node as a peer would; in alternating
// blocks with the same Gets and no slow connections. Per block:
// max-close-ns (the longest a slow connection stayed open after its
// request was sent; p50-close-ns the median), not-closed (slow connections still open 10 s past
// the ReadTimeout), the Gets' ns/op, get-p99-ns and get-failures, and
// gets-within-read-timeout (1 if all the Gets ran while the slow
// connections could still be held).
func BenchmarkSlowBodies(b *testing.B) {
	c := newFxCluster(b, 1, fxConfig{getter: &fxSource{}, readTimeout: fxSlowReadTimeout})
	var round atomic.Int64
	fair.Run(b, fair.Options{Baseline: "quiet", GC: true, Ratios: []string{"get-p99-ns"}},
		fxSlowSystem(b, "quiet", c, &round, false),
		fxSlowSystem(b, "slow-bodies", c, &round, true))
	b.ReportMetric(fxSlowReadTimeout.Seconds(), "read-timeout-s")
}

// TestFakePeerHarness checks the fake peers of BenchmarkHugeLength: the
// client's Gets from a liar fail, and an honest node's succeed.
func TestFakePeerHarness(t *testing.T) {
	liar := startFxFake(t, true, func(c net.Conn) bool {
		_, _ = io.WriteString(c, fxHugeHeader)
		return false
	})
	honest := newFxCluster(t, 1, fxConfig{getter: getter.Func(func(context.Context, string) ([]byte, error) { return []byte{'x'}, nil })})
	for _, s := range []fair.System{
		fxClientSystem(t, "honest", honest.nodes[0].addr, 0, false),
		fxClientSystem(t, "liar-close", liar.addr, 0, true),
	} {
		s.Run(3) // fails the test on a wrong outcome
	}
}
