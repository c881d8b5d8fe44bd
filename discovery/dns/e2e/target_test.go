package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/discovery/dns"
)

var outage = flag.Duration("dns.outage", 6*time.Second,
	"how long TestTarget stops the DNS server, longer than the 5 s Interval (the target: 30s)")

// The DNS target with the default options (Interval 5s, Debounce 500ms)
// on 5 nodes that each watch the server: a change reaches every node's
// ring (the time is reported; the bound, Interval + Debounce, is asserted
// in virtual time by the package's own
// TestWatchChangeReachesRingWithinIntervalPlusDebounce), and the server
// stopped for -dns.outage changes no ring. Run it as
//
//	cd discovery/dns/e2e && go test -run TestTarget -v -dns.outage=30s .
func TestTarget(t *testing.T) {
	const nodes, ttl = 5, 2 * time.Second
	s := startServer(t)
	ips := func(from, to int) (rrs, urls []string) {
		for i := from; i <= to; i++ {
			rrs = append(rrs, fmt.Sprintf("cache.test. %d IN A 10.0.0.%d", ttl/time.Second, i))
			urls = append(urls, fmt.Sprintf("http://10.0.0.%d:8080", i))
		}
		return rrs, urls
	}
	rrs, want := ips(1, nodes)
	s.set(normal, rrs...)

	quiet := slog.New(slog.DiscardHandler)
	pools := make([]*nethttp.Pool, nodes)
	stats := make([]dns.Stats, nodes)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	for i := range pools {
		p, err := nethttp.NewPool(want[i], cache.NewRegistry(), &nethttp.PoolOptions{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		pools[i] = p
		wg.Go(func() {
			err := dns.Watch(ctx, p, "cache.test", &dns.Options{Port: 8080, Resolver: resolver(s.addr), Logger: quiet, Stats: &stats[i]})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Watch: %v", err)
			}
		})
	}
	// all waits, at most 20 s, for every node's ring to be want (and
	// the node itself: Set keeps self); it returns how long that took.
	ring := func(p *nethttp.Pool, want []string) []string {
		r := append(slices.Clone(want), p.Self())
		slices.Sort(r)
		return slices.Compact(r)
	}
	all := func(want []string) time.Duration {
		start := time.Now()
		for time.Since(start) < 20*time.Second {
			if !slices.ContainsFunc(pools, func(p *nethttp.Pool) bool { return !slices.Equal(p.Addrs(), ring(p, want)) }) {
				return time.Since(start)
			}
			time.Sleep(5 * time.Millisecond)
		}
		for i, p := range pools {
			t.Errorf("node %d: ring %q, want %q", i, p.Addrs(), ring(p, want))
		}
		t.FailNow()
		return 0
	}
	all(want)

	// Scale-out by two records; then 10.0.0.3 leaves.
	rrs, want = ips(1, nodes+2)
	for _, change := range []string{"scale-out 5 -> 7", "10.0.0.3 leaves"} {
		if change != "scale-out 5 -> 7" {
			rrs, want = slices.Delete(rrs, 2, 3), slices.Delete(want, 2, 3)
		}
		s.set(normal, rrs...)
		d := all(want)
		t.Logf("%s: every node's ring had it %v after the change (target: Interval 5s + Debounce 0.5s = 5.5s)",
			change, d.Round(time.Millisecond))
	}

	// The server stops: every ring stays as it is.
	before := make([][]string, nodes)
	for i, p := range pools {
		before[i] = p.Addrs()
	}
	s.stop()
	time.Sleep(*outage)
	var kept uint64
	for i, p := range pools {
		if got := p.Addrs(); !slices.Equal(got, before[i]) {
			t.Errorf("node %d: ring %q after the server stopped for %v, want %q", i, got, *outage, before[i])
		}
		kept += stats[i].Kept.Load()
	}
	if kept == 0 {
		t.Errorf("no lookup failed while the server was stopped")
	}
	t.Logf("DNS server stopped for %v: %d lookups failed on %d nodes, no ring changed", *outage, kept, nodes)
}
