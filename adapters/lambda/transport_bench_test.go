//go:build linux

package lambda

import (
	"fmt"
	"github.com/geecache/geecache/internal/peertest"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// BenchmarkPeerFetchInvokeVsURL compares the two ways a node fetches from
// a Lambda peer, against one emulated node: the Invoke API (an
// invokeClient through the SDK, straight to the emulator) and the Function
// URL path (a nethttp.Client through a Front, which invokes the emulator).
// Both fetch the same cached key, one at a time, in alternating blocks of
// 100 (Invoke, URL, Invoke, URL...), b.N rounds; it reports each block's
// p50, the median p50 of each transport, and the min and median over
// rounds of p50(Invoke)/p50(URL). Run with
//
//	GEECACHE_RIE=$PWD/.tools/bin/aws-lambda-rie go test -run '^$' -bench PeerFetchInvokeVsURL -benchtime 15x ./adapters/lambda/
func BenchmarkPeerFetchInvokeVsURL(b *testing.B) {
	rie := rieBinary(b)
	bootstrap := buildBootstrap(b)
	const name = "geecache-b"
	addr := freeAddr(b)
	e := startEmulatorAt(b, rie, bootstrap, addr, invokeEnv(b, name, []string{name}, nil, modeBuffered))
	ln := listen(b)
	startFront(b, ln, e)

	quiet := slog.New(slog.DiscardHandler)
	byURL, err := nethttp.NewClient("http://"+ln.Addr().String(), &nethttp.ClientOptions{MaxValueBytes: maxValueBytes})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(byURL.CloseIdleConnections)
	peers, err := NewPeers("", &PeersOptions{Logger: quiet, Cluster: nethttp.Cluster{MaxValueBytes: maxValueBytes}, Peers: PeerOptions{Client: sdkClient(b)},
		Resolve: func(string) (string, string) { return "function", "http://" + addr }})
	if err != nil {
		b.Fatal(err)
	}
	if err := peers.Set(name); err != nil {
		b.Fatal(err)
	}
	byInvoke, _ := peers.PickPeer("Tom")
	getters := []cache.Peer{byInvoke, byURL}

	const block = 100
	fetch := func(g cache.Peer) time.Duration {
		start := time.Now()
		v, _, err := peertest.Get(b.Context(), g, "scores", "Tom")
		d := time.Since(start)
		if err != nil || string(v) != "630" {
			b.Fatalf("%T: %q, %v", g, v, err)
		}
		return d
	}
	for range 20 { // warm up both paths (cold start, connections)
		fetch(getters[0])
		fetch(getters[1])
	}
	p50 := func(g cache.Peer) time.Duration {
		lat := make([]time.Duration, block)
		for i := range lat {
			lat[i] = fetch(g)
		}
		slices.Sort(lat)
		return lat[block/2]
	}
	var ratios []float64
	var inv, url []time.Duration
	b.ResetTimer()
	for range b.N {
		a, u := p50(getters[0]), p50(getters[1])
		inv, url = append(inv, a), append(url, u)
		ratios = append(ratios, float64(a)/float64(u))
	}
	b.StopTimer()
	slices.Sort(ratios)
	slices.Sort(inv)
	slices.Sort(url)
	b.ReportMetric(float64(inv[len(inv)/2].Microseconds()), "invoke-p50-µs")
	b.ReportMetric(float64(url[len(url)/2].Microseconds()), "url-p50-µs")
	b.ReportMetric(ratios[0], "ratio-min")
	b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
	b.Logf("p50 ratios Invoke/URL by round, sorted: %s", fmt.Sprint(ratios))
}
