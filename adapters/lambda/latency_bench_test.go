//go:build linux

package lambda

import (
	"log/slog"

	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Warm get latency of one node, sequential cache hits: through a Front and
// the emulator, and from a net/http node. Run with
//
//	GEECACHE_RIE=$PWD/.tools/bin/aws-lambda-rie go test -run '^$' -bench Latency -benchtime 500x ./adapters/lambda/

func BenchmarkLatencyLambdaFront(b *testing.B) {
	rie := rieBinary(b)
	bootstrap := buildBootstrap(b)
	ln := listen(b)
	url := "http://" + ln.Addr().String()
	e := startEmulator(b, rie, bootstrap, []string{envSelfURL + "=" + url, envPeers + "=" + url})
	startFront(b, ln, e)
	measure(b, url)
}

// BenchmarkLatencyEmulatorDirect posts a ready-made event straight to the
// emulator: the runtime's own round trip, which the Front adds to.
func BenchmarkLatencyEmulatorDirect(b *testing.B) {
	rie := rieBinary(b)
	bootstrap := buildBootstrap(b)
	self := "http://127.0.0.1:1"
	e := startEmulator(b, rie, bootstrap, []string{envSelfURL + "=" + self, envPeers + "=" + self})
	var ev events.LambdaFunctionURLRequest
	ev.RawPath = protocol.Path("scores", "Tom")
	ev.RequestContext.HTTP.Method = http.MethodGet
	payload, _ := json.Marshal(ev)
	hc := &http.Client{Transport: nethttp.NewTransport(), Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	invoke := func() {
		res, err := hc.Post("http://"+e.addr+"/2015-03-31/functions/function/invocations", "application/json", bytes.NewReader(payload))
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !bytes.Contains(body, []byte(`"statusCode":200`)) {
			b.Fatalf("%s", body)
		}
	}
	report(b, invoke)
}

func BenchmarkLatencyNetHTTP(b *testing.B) {
	ln := listen(b)
	url := "http://" + ln.Addr().String()
	reg := cache.NewRegistry()
	pool, err := nethttp.NewPool(url, reg, &nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := reg.NewGroup("scores", 1<<20, getter.Map(seedScores), &cache.GroupOptions{Peers: pool}); err != nil {
		b.Fatal(err)
	}
	srv := nethttp.NewServer("", pool, nil)
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = pool.Close()
	})
	measure(b, url)
}

// measure gets scores/Tom from node, one at a time, and reports p50 and
// p99.
func measure(b *testing.B, node string) {
	hc := &http.Client{Transport: nethttp.NewTransport(), Timeout: 30 * time.Second}
	defer hc.CloseIdleConnections()
	url := node + protocol.Path("scores", "Tom")
	get := func() {
		res, err := hc.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(body) != "630" {
			b.Fatalf("%d %q", res.StatusCode, body)
		}
	}
	report(b, get)
}

// report runs op 20 times to warm up, then b.N times, and reports the
// p50 and p99 of one op.
func report(b *testing.B, op func()) {
	for range 20 {
		op()
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		op()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
