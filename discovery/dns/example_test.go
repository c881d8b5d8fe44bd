package dns_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/discovery/dns"
)

// A node in a Kubernetes Deployment behind the headless Service
// "cache-peers" (clusterIP: None): its peers are the Service's A records,
// each one a Pod IP, on the port the Pods listen on. The Pool's self is
// spelled as Watch spells the records, http://POD_IP:PORT.
func ExampleWatch() {
	podIP := "10.1.2.3" // in a Pod: os.Getenv("POD_IP") from the downward API
	pool, err := nethttp.NewPool("http://"+podIP+":8080", cache.NewRegistry(), nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond) // in a node: until SIGTERM
	defer cancel()
	var stats dns.Stats
	// A resolver that asks one DNS server; in a Pod, leave Resolver nil
	// for the nameservers and search list of /etc/resolv.conf, with which
	// "cache-peers" is enough.
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, network, "127.0.0.1:1")
	}}
	err = dns.Watch(ctx, pool, "cache-peers.default.svc.cluster.local.", &dns.Options{
		Port:     8080,
		Resolver: resolver,
		Timeout:  20 * time.Millisecond,
		Stats:    &stats,
	})
	// No DNS server answers here, so the ring keeps what it had: self.
	fmt.Println(errors.Is(err, context.DeadlineExceeded), pool.Addrs(), stats.Kept.Load() > 0)
	// Output: true [http://10.1.2.3:8080] true
}
