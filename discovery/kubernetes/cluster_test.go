package kubernetes_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/discovery/kubernetes"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// counting counts the peer requests sent to each host:port, but for
// memory-only reads (the header X-Geecache-Peer: memory of the handoff
// protocol: a node asks a key's previous owner, which may be a node that
// drains, for what it holds). The target allows those.
type counting struct {
	base http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("X-Geecache-Peer") != "memory" {
		c.mu.Lock()
		c.n[r.URL.Host]++
		c.mu.Unlock()
	}
	return c.base.RoundTrip(r)
}

func (c *counting) sent(host string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[host]
}

// The target, over loopback HTTP: three nodes whose peer sets are
// fed by Watch from one (fake) API server, each pod in a slice of its own
// (the controller writes one slice per port number). When one pod starts
// terminating, it leaves the other nodes' rings, and after that no peer
// request is sent to it (but handoff reads), for keys it owned before,
// present or missing.
func TestClusterSendsNothingToATerminatingPod(t *testing.T) {
	tr := nethttp.NewTransport()
	t.Cleanup(tr.CloseIdleConnections)
	cnt := &counting{base: tr, n: map[string]int{}}
	nodes := nethttptest.Start(t, 3, &nethttptest.Options{PoolOptions: nethttp.PoolOptions{Transport: cnt}})

	hosts := make([]string, len(nodes))
	slices := make([]*discoveryv1.EndpointSlice, len(nodes))
	for i, nd := range nodes {
		u, err := url.Parse(nd.Addr)
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.Atoi(u.Port())
		hosts[i] = u.Host
		slices[i] = slice(svc, "geecache-"+strconv.Itoa(i), v4, httpPort(int32(port)),
			pod{name: "geecache-" + strconv.Itoa(i), ip: u.Hostname(), ready: true})
	}
	cs := fake.NewClientset(slices[0], slices[1], slices[2])
	for _, nd := range nodes {
		start(t, cs, nd.Pool, &kubernetes.Options{Port: "http"})
		wantAddrs(t, nd.Pool, nodes[0].Addr, nodes[1].Addr, nodes[2].Addr)
	}

	get := func(from int, lo, hi int) {
		t.Helper()
		for k := lo; k < hi; k++ {
			key := "k" + strconv.Itoa(k)
			v, err := nodes[from].Group.Get(context.Background(), key)
			if err != nil || v.String() != "v:"+key {
				t.Fatalf("node %d Get(%s) = %q, %v", from, key, v.String(), err)
			}
			if _, err := nodes[from].Group.Get(context.Background(), "missing"+key); !errors.Is(err, getter.ErrNotFound) {
				t.Fatalf("node %d Get(missing%s) = %v, want ErrNotFound", from, key, err)
			}
		}
	}
	get(0, 0, 100)
	get(1, 100, 200)
	if cnt.sent(hosts[2]) == 0 {
		t.Fatal("no request reached node 2 while it was ready: the count proves nothing")
	}

	// Node 2's pod is deleted: terminating, still serving while it drains.
	update(t, cs, slice(svc, "geecache-2", v4, slices[2].Ports,
		pod{name: "geecache-2", ip: "127.0.0.1", ready: true, terminating: true}))
	testkit.WaitFor(t, "node 2 to leave the rings", func() bool {
		return sameAddrs(nodes[0].Pool, nodes[0].Addr, nodes[1].Addr) &&
			sameAddrs(nodes[1].Pool, nodes[0].Addr, nodes[1].Addr)
	})
	before := cnt.sent(hosts[2])
	get(0, 0, 300) // keys it owned and served before, and new ones
	get(1, 0, 300)
	if after := cnt.sent(hosts[2]); after != before {
		t.Fatalf("%d requests sent to the terminating node after it left the rings", after-before)
	}
}
