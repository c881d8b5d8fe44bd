//go:build !js && !wasip1

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
)

// Serving throughput of one node: the wasm node in node.js (shim.js and
// wasmjs) against a net/http node, both answering the peer request for
// scores/Tom from memory, measured in the same run in alternating blocks.
// A third server, bare node.js (bareNodeServer: the same answer, headers
// included, with no Go behind it), shows the host's own ceiling. Each b.Loop iteration is one
// round: a block of benchBlock requests to each server (the order rotates
// between rounds), benchConc at a time over keep-alive connections.
// Reported: each server's median req/s, and the min and median over the
// rounds of the wasm/native and wasm/bare-node ratios. Run with
//
//	go test -run '^$' -bench ServeWasmVsNative -benchtime 10x ./examples/wasm/
func BenchmarkServeWasmVsNative(b *testing.B) {
	const benchBlock, benchConc = 2000, 16
	node := nodeJS(b)
	wasm, wasmExec := buildWasm(b)
	w := startWasmNode(b, node, wasm, wasmExec, "")
	n := startNative(b, "", 0)
	// A peer's request for scores/Tom, as adapters/PROTOCOL.md writes it
	// (no secret: unsigned).
	const path = "/_geecache/" + groupName + "/Tom"
	peerHeader := http.Header{"X-Geecache-Peer": {"1"}}
	tr := nethttp.NewTransport()
	defer tr.CloseIdleConnections()
	bare := startBareNode(b, node, answerHeaders(b, tr, w.url+path, peerHeader))

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
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
					req.Header = peerHeader
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
	block(bare.url, 1000)

	servers := []string{n.url, w.url, bare.url}
	rates := make([][]float64, len(servers)) // per server, per round
	round := 0
	for b.Loop() {
		for i := range servers {
			j := (i + round) % len(servers)
			rates[j] = append(rates[j], block(servers[j], benchBlock))
		}
		round++
	}
	var vsNative, vsBare []float64
	for r := range rates[0] {
		vsNative = append(vsNative, rates[1][r]/rates[0][r])
		vsBare = append(vsBare, rates[1][r]/rates[2][r])
	}
	med := func(xs []float64) float64 { s := slices.Sorted(slices.Values(xs)); return s[len(s)/2] }
	b.ReportMetric(med(rates[0]), "native-req/s")
	b.ReportMetric(med(rates[1]), "wasm-req/s")
	b.ReportMetric(med(rates[2]), "bare-node-req/s")
	b.ReportMetric(slices.Min(vsNative), "wasm/native-min")
	b.ReportMetric(med(vsNative), "wasm/native-median")
	b.ReportMetric(slices.Min(vsBare), "wasm/bare-node-min")
	b.ReportMetric(med(vsBare), "wasm/bare-node-median")
}

// bareNodeServer answers every request as shim.js routes a peer request,
// with the bytes the wasm node sends for scores/Tom (its status, body and
// headers, given as JSON in BARE_HEADERS), and no Go behind it.
const bareNodeServer = `
const http = require("http");
const body = new Uint8Array([54, 51, 48]);
const headers = JSON.parse(process.env.BARE_HEADERS);
const srv = http.createServer(async (req, res) => {
  const ac = new AbortController();
  res.on("close", () => { if (!res.writableFinished) ac.abort(); });
  const r = await Promise.resolve({status: 200, headers, body});
  res.writeHead(r.status, r.headers);
  res.end(r.body);
});
srv.listen(0, "127.0.0.1", () => console.log("geecache wasm node listening on http://127.0.0.1:" + srv.address().port));
process.on("SIGTERM", () => process.exit(0));
`

// answerHeaders asks url once and returns the answer's headers, less
// those node.js adds to every answer (Date, Connection, Keep-Alive), as
// JSON: what the bare server sends, so that it answers the same bytes.
func answerHeaders(b *testing.B, tr http.RoundTripper, url string, h http.Header) string {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header = h
	resp, err := tr.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "630" {
		b.Fatalf("%s: %s %q; want 200 630", url, resp.Status, body)
	}
	out := map[string]string{}
	for k, vs := range resp.Header {
		if k != "Date" && k != "Connection" && k != "Keep-Alive" {
			out[k] = strings.Join(vs, ", ")
		}
	}
	j, err := json.Marshal(out)
	if err != nil {
		b.Fatal(err)
	}
	return string(j)
}

// startBareNode runs bareNodeServer in node.js, answering with headers (a
// JSON object); it is stopped when the benchmark ends.
func startBareNode(b *testing.B, node, headers string) *wasmNode {
	cmd := exec.Command(node, "-e", bareNodeServer)
	cmd.Env = append(os.Environ(), "BARE_HEADERS="+headers)
	return startProcess(b, cmd)
}
