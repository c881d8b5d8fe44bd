//go:build !js && !wasip1

package main

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/examples/internal/hosttest"
)

// Serving throughput of the wasm node in each JavaScript host installed
// (node.js with shim.js, Deno and Bun with fetch.mjs, workerd with
// examples/workers) against a net/http node, all answering the peer
// request for scores/Tom from memory, in alternating blocks of the same
// run (the order rotates between rounds): each b.Loop iteration is one
// round, a block of 2000 requests to each server, 16 at a time over
// keep-alive connections. Each host also runs a bare server answering
// the same bytes (status, body, the headers its wasm node sent) with no
// Go behind it: node's http, Deno.serve, Bun.serve, a Worker (hostbare_test.go).
// Reported per host: its median req/s and the min and median over the
// rounds of host/native and of host/bare (the wasm node against its own
// host answering alone). Run with
//
//	go test -run '^$' -bench ServeHosts -benchtime 5x ./examples/wasm/
func BenchmarkServeHosts(b *testing.B) {
	const block, conc = 2000, 16
	wasm, wasmExec := hosttest.BuildWasm(b)
	ready := regexp.MustCompile(`geecache wasm node listening on (http://127\.0\.0\.1:\d+)`)
	const path = "/_geecache/" + groupName + "/Tom"
	tr := nethttp.NewTransport()
	defer tr.CloseIdleConnections()
	names := []string{"native"}
	urls := []string{hosttest.StartNative(b, nil).URL}
	var hosts []int // indexes of the hosts' wasm nodes; each one's bare server is the next
	add := func(name, tool string, p *hosttest.Proc) {
		headers := answerHeaders(b, tr, p.URL+path, http.Header{"X-Geecache-Peer": {"1"}})
		hosts = append(hosts, len(urls))
		names, urls = append(names, name, name+"-bare"), append(urls, p.URL, startBare(b, name, tool, headers).URL)
	}
	if node, err := exec.LookPath("node"); err == nil {
		add("node", node, hosttest.Start(b, exec.Command(node, "shim.js", "--wasm-exec="+wasmExec, wasm), ready))
	}
	fetchArgs := []string{"--wasm-exec=" + wasmExec, wasm}
	if deno := hosttest.Find("deno"); deno != "" {
		add("deno", deno, hosttest.Start(b, exec.Command(deno, append([]string{"run", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", "fetch.mjs"}, fetchArgs...)...), ready))
	}
	if bun := hosttest.Find("bun"); bun != "" {
		add("bun", bun, hosttest.Start(b, exec.Command(bun, append([]string{"fetch.mjs"}, fetchArgs...)...), ready))
	}
	if workerd := hosttest.Find("workerd"); workerd != "" {
		add("workerd", workerd, hosttest.StartWorkerd(b, "../workers", "config.capnp", []string{"worker.mjs", "../wasm/batch.mjs"}, func(self string) []string {
			return []string{"GEECACHE_SELF=" + self}
		}))
	}
	send := func(base string, count int) float64 {
		var next, failed atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range conc {
			wg.Go(func() {
				for next.Add(1) <= int64(count) {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
					req.Header.Set("X-Geecache-Peer", "1")
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
	for _, u := range urls { // warm up: Tom loaded, connections open, JITs warm
		send(u, 1000)
	}
	rates := make([][]float64, len(urls))
	round := 0
	for b.Loop() {
		for i := range urls {
			j := (i + round) % len(urls)
			rates[j] = append(rates[j], send(urls[j], block))
		}
		round++
	}
	med := func(xs []float64) float64 { s := slices.Sorted(slices.Values(xs)); return s[len(s)/2] }
	b.ReportMetric(med(rates[0]), "native-req/s")
	for _, i := range hosts {
		var vsNative, vsBare []float64
		for r := range rates[0] {
			vsNative = append(vsNative, rates[i][r]/rates[0][r])
			vsBare = append(vsBare, rates[i][r]/rates[i+1][r])
		}
		b.ReportMetric(med(rates[i]), names[i]+"-req/s")
		b.ReportMetric(med(rates[i+1]), names[i+1]+"-req/s")
		b.ReportMetric(slices.Min(vsNative), names[i]+"/native-min")
		b.ReportMetric(med(vsNative), names[i]+"/native-median")
		b.ReportMetric(slices.Min(vsBare), names[i]+"/bare-min")
		b.ReportMetric(med(vsBare), names[i]+"/bare-median")
	}
}
