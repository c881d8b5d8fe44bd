//go:build !js && !wasip1

package main

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/protocol"
)

// Serving throughput of one node: the wasm node in node.js (shim.js and
// wasmjs) against a net/http node, both answering the peer request for
// scores/Tom from memory, measured in the same run in alternating blocks.
// Each b.Loop iteration is one round: a block of benchBlock requests to
// each node (the order alternates between rounds), benchConc at a time
// over keep-alive connections. Reported: each side's median req/s, and
// the wasm/native ratio's min and median over the rounds. Run with
//
//	go test -run '^$' -bench ServeWasmVsNative -benchtime 10x ./examples/wasm/
func BenchmarkServeWasmVsNative(b *testing.B) {
	const benchBlock, benchConc = 2000, 16
	node := nodeJS(b)
	wasm, wasmExec := buildWasm(b)
	w := startWasmNode(b, node, wasm, wasmExec, "")
	n := startNative(b, "", 0)
	preq := protocol.NewClient().NewRequest(groupName, "Tom")
	tr := nethttp.NewTransport()
	defer tr.CloseIdleConnections()

	// block sends count requests to base, conc at a time, and returns
	// the requests per second.
	block := func(base string, count int) float64 {
		var next, failed atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range benchConc {
			wg.Go(func() {
				for next.Add(1) <= int64(count) {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+preq.Path, nil)
					req.Header = preq.Header
					resp, err := tr.RoundTrip(req)
					if err == nil {
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 || string(body) != "630" {
							err = io.ErrUnexpectedEOF
						}
					}
					cancel()
					if err != nil {
						failed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if f := failed.Load(); f > 0 {
			b.Fatalf("%s: %d of %d requests failed", base, f, count)
		}
		return float64(count) / time.Since(start).Seconds()
	}
	// Warm up: Tom loaded on both, connections open, node's JIT warm.
	block(n.url, 200)
	block(w.url, 1000)

	var nat, wsm, ratio []float64
	round := 0
	for b.Loop() {
		var rn, rw float64
		if round%2 == 0 {
			rn, rw = block(n.url, benchBlock), block(w.url, benchBlock)
		} else {
			rw, rn = block(w.url, benchBlock), block(n.url, benchBlock)
		}
		round++
		nat, wsm, ratio = append(nat, rn), append(wsm, rw), append(ratio, rw/rn)
	}
	med := func(xs []float64) float64 { s := slices.Sorted(slices.Values(xs)); return s[len(s)/2] }
	b.ReportMetric(med(nat), "native-req/s")
	b.ReportMetric(med(wsm), "wasm-req/s")
	b.ReportMetric(slices.Min(ratio), "wasm/native-min")
	b.ReportMetric(med(ratio), "wasm/native-median")
}
