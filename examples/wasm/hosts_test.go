//go:build !js && !wasip1

package main

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/examples/internal/hosttest"
)

// The wasm node in node.js (shim.js), Deno and Bun (fetch.mjs), in a cluster with two
// net/http nodes and a peer secret: see hosttest.Cluster and
// hosttest.Keys for what each host must do. scripts/js-hosts.sh installs
// the hosts; without one, its test skips, saying so.
func TestNode(t *testing.T) {
	testFetchHost(t, nodeJS(t), "shim.js")
}

func TestDeno(t *testing.T) {
	deno := hosttest.Tool(t, "deno")
	testFetchHost(t, deno, "run", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", "fetch.mjs")
}

func TestBun(t *testing.T) {
	testFetchHost(t, hosttest.Tool(t, "bun"), "fetch.mjs")
}

// testFetchHost runs `bin args... --listen=... --wasm-exec=... node.wasm -- -peers=...`
// (shim.js and fetch.mjs take the same arguments) in a ring with two
// net/http nodes and checks it (hosttest.Cluster, hosttest.Keys), then
// once more in a ring with a peer that is down and one that lies
// (hosttest.Faults), and once more with a slow peer it asks 16 times at
// once for one key (hosttest.Concurrent).
func testFetchHost(t *testing.T, bin string, args ...string) {
	if out, err := exec.Command(bin, "--version").Output(); err == nil {
		t.Logf("%s", out)
	}
	wasm, wasmExec := hosttest.BuildWasm(t)
	const secret = "hosts secret"
	start := func(peers string) *hosttest.Proc {
		cmd := exec.Command(bin, append(args, "--listen=127.0.0.1:0", "--wasm-exec="+wasmExec, wasm, "--", "-peers="+peers)...)
		cmd.Env = append(os.Environ(), "GEECACHE_SECRET="+secret, "NO_COLOR=1")
		return hosttest.Start(t, cmd, regexp.MustCompile(`geecache wasm node listening on (http://127\.0\.0\.1:\d+)`))
	}
	opts := &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte(secret)}}
	a, b := hosttest.StartNative(t, opts), hosttest.StartNative(t, opts)
	p := start(a.URL + "," + b.URL)
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
	p.Stop(t)

	f := hosttest.StartFaulty(t)
	p = start(f.Down + "," + f.Liar)
	hosttest.Faults(t, ctx, hosttest.Node{Proc: p, Addr: p.URL}, f)
	p.Stop(t)

	// 16 requests at once for a key of a slow owner: one fetch, every
	// request answered.
	s := hosttest.StartSlowNative(t, opts, 300*time.Millisecond)
	p = start(s.URL)
	key := hosttest.KeyOwnedBy(t, s.URL, s.URL, p.URL)
	r := hosttest.Concurrent(t, ctx, hosttest.Node{Proc: p, Addr: p.URL}, "scores", key, dataset()[key], 16)
	if r.Stats.DedupWaits == 0 || s.DB.Lookups(key) != 1 {
		t.Errorf("%d requests waited for the one fetch, the owner looked %s up %d times; want > 0 and 1", r.Stats.DedupWaits, key, s.DB.Lookups(key))
	}
}
