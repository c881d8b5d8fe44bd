//go:build !js

package workers

import (
	"context"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/examples/internal/hosttest"
)

// worker.mjs under workerd, a member of a ring with two net/http nodes,
// the peer secret given as a binding: the Go program starts inside the
// first request (workerd refuses it at module load), reaches its peers
// with 0 fallbacks, serves them, and every key of the key-escaping test
// goes both ways through workerd.
func TestWorker(t *testing.T) {
	const secret = "workers secret"
	opts := &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte(secret)}}
	a, b := hosttest.StartNative(t, opts), hosttest.StartNative(t, opts)
	p := startWorkerd(t, "config.capnp", []string{"worker.mjs", "../wasm/batch.mjs"}, func(self string) []string {
		return []string{"GEECACHE_SECRET=" + secret, "GEECACHE_PEERS=" + a.URL + "," + b.URL, "GEECACHE_SELF=" + self}
	})
	for _, n := range []*hosttest.Native{a, b} {
		if err := n.Pool.Set(a.URL, b.URL, p.URL); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := hosttest.Node{Proc: p, Addr: p.URL}
	natives := []*hosttest.Native{a, b}
	hosttest.Cluster(t, ctx, w, natives)
	c, err := nethttp.NewClient(p.URL, &nethttp.ClientOptions{Secret: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	hosttest.Keys(t, ctx, w, natives, c)
	hosttest.Put(t, ctx, w, natives)
	hosttest.UnsignedBody(t, ctx, w)
}

// worker.mjs without SELF, as it runs on Cloudflare: a client of the ring
// (two net/http nodes) that owns no key. Every key comes from its owner
// with 0 fallbacks, and every key a JavaScript string holds makes the
// round trip through workerd's fetch().
func TestWorkerAsClient(t *testing.T) {
	const secret = "workers secret"
	opts := &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte(secret)}}
	a, b := hosttest.StartNative(t, opts), hosttest.StartNative(t, opts)
	natives := []*hosttest.Native{a, b}
	for _, n := range natives {
		if err := n.Pool.Set(a.URL, b.URL); err != nil {
			t.Fatal(err)
		}
	}
	p := startWorkerd(t, "config.capnp", []string{"worker.mjs", "../wasm/batch.mjs"}, func(string) []string {
		return []string{"GEECACHE_SECRET=" + secret, "GEECACHE_PEERS=" + a.URL + "," + b.URL}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := hosttest.Node{Proc: p} // owns nothing
	hosttest.Cluster(t, ctx, w, natives)
	hosttest.Keys(t, ctx, w, natives, nil)
}

// worker.mjs under workerd with a peer that is down and one that lies:
// workerd's fetch() reports both failures to the node, which loads each
// of their keys itself and never returns the liar's value.
func TestWorkerFaults(t *testing.T) {
	f := hosttest.StartFaulty(t)
	p := startWorkerd(t, "config.capnp", []string{"worker.mjs", "../wasm/batch.mjs"}, func(self string) []string {
		return []string{"GEECACHE_SECRET=workers secret", "GEECACHE_PEERS=" + f.Down + "," + f.Liar, "GEECACHE_SELF=" + self}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hosttest.Faults(t, ctx, hosttest.Node{Proc: p, Addr: p.URL}, f)
}

// 16 requests at once to the Worker (a client, as on Cloudflare) for a
// key of a slow owner: the node fetches it once and every request gets
// it. workerd cancels a request with nothing pending of its own ("your
// Worker's code had hung") unless worker.mjs keeps a timer pending in it
// while it waits; without that, all but one of them answered 500.
func TestWorkerConcurrentRequests(t *testing.T) {
	const secret = "workers secret"
	n := hosttest.StartSlowNative(t, &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte(secret)}}, 300*time.Millisecond)
	p := startWorkerd(t, "config.capnp", []string{"worker.mjs", "../wasm/batch.mjs"}, func(string) []string {
		return []string{"GEECACHE_SECRET=" + secret, "GEECACHE_PEERS=" + n.URL}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := hosttest.Concurrent(t, ctx, hosttest.Node{Proc: p}, "scores", "Tom", "630", 16)
	if r.Stats.DedupWaits == 0 || n.DB.Lookups("Tom") != 1 {
		t.Errorf("%d requests waited for the one fetch, the owner looked Tom up %d times; want > 0 and 1", r.Stats.DedupWaits, n.DB.Lookups("Tom"))
	}
}
