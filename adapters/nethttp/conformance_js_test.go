//go:build js && wasm

package nethttp_test

import (
	"errors"
	"log/slog"
	"strconv"
	"syscall/js"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/wasmjs"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/cache/cachetest"
)

// A Pool under GOOS=js, whose Clients reach its peers with fetch(), keeps
// every promise the conformance kit checks. Each node is a Pool in this
// test's process, served by a node.js http server (the host listens; Go
// cannot under js) that answers with wasmjs.Func; the nodes reach each
// other over 127.0.0.1 with fetch(). The server holds the requests of a
// hung node, their connections open, until it is resumed; it flips a byte
// of a lying node's answers, their status and headers (the checksum
// among them) as the node sent them. Run under node
// with
//
//	PATH="$PATH:$(go env GOROOT)/lib/wasm" GOOS=js GOARCH=wasm go test -run Conformance ./adapters/nethttp/
func TestConformanceFetch(t *testing.T) {
	cachetest.TestTransport(t, func(t *testing.T, o cachetest.Options) cachetest.Cluster {
		quiet := slog.New(slog.DiscardHandler)
		hosts := make([]js.Value, o.Nodes)
		addrs := make([]string, o.Nodes)
		for i := range hosts {
			hosts[i] = startConformanceHost(t)
			addrs[i] = "http://127.0.0.1:" + strconv.Itoa(hosts[i].Get("port").Int())
		}
		c := cachetest.Cluster{Hang: func(i int) func() {
			hosts[i].Call("hang")
			return func() { hosts[i].Call("resume") }
		}, Lie: func(i int) func() {
			hosts[i].Call("lie", true)
			return func() { hosts[i].Call("lie", false) }
		}}
		for i, h := range hosts {
			reg := cache.NewRegistry()
			pool, err := nethttp.NewPool(addrs[i], reg, &nethttp.PoolOptions{
				Cluster: nethttp.Cluster{Secret: []byte("conformance")}, Logger: quiet,
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := pool.Set(addrs...); err != nil {
				t.Fatal(err)
			}
			gopts := o.GroupOptions
			gopts.Peers, gopts.Logger = pool, quiet
			g, err := reg.NewGroup(o.Group, 1<<20, o.Getter(i), &gopts)
			if err != nil {
				t.Fatal(err)
			}
			f := wasmjs.Func(pool)
			h.Set("serve", f)
			t.Cleanup(func() {
				// The host lets go of its held requests and stops calling
				// f (it answers 503 from now on) before f is released.
				h.Call("close")
				_ = pool.Close()
				f.Release()
			})
			c.Groups = append(c.Groups, g)
			c.Pickers = append(c.Pickers, pool)
		}
		return c
	})
}

// conformanceHost is the source of a node.js http server that answers
// every request with its serve property (a wasmjs.Func), the request's
// body included, and holds the requests between hang() and resume().
// Between lie(true) and lie(false) it changes one byte of every answer's
// body (adds one to an empty body) and nothing else. It resolves to
// {port, serve, hang, resume, lie, close}; close, which may be called
// again, lets the held requests go and stops calling serve.
const conformanceHost = `
const http = globalThis.require("http");
return new Promise((resolve, reject) => {
  let held = null, release = () => {}, lying = false;
  const host = {
    serve: null,
    hang() { if (!held) held = new Promise((r) => { release = r; }); },
    resume() { const r = release; held = null; release = () => {}; r(); },
    lie(on) { lying = on; },
  };
  const srv = http.createServer(async (req, res) => {
    res.on("error", () => {});
    const ac = new AbortController();
    res.on("close", () => ac.abort());
    try {
      while (held) await held;
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const buf = Buffer.concat(chunks);
      const body = buf.length ? new Uint8Array(buf.buffer, buf.byteOffset, buf.length) : undefined;
      const serve = host.serve;
      if (!serve) { res.writeHead(503); res.end("closed"); return; }
      const r = await serve(req.method, req.url.split("?")[0], req.headers, ac.signal, body);
      if (res.destroyed) return;
      let headers = r.headers, out = r.body;
      if (lying) {
        out = Buffer.from(out ?? "");
        if (out.length) out[0] ^= 1;
        else out = Buffer.from("x");
        headers = { ...headers, "Content-Length": String(out.length) };
      }
      res.writeHead(r.status, headers);
      res.end(out);
    } catch (e) {
      if (!res.destroyed) { res.writeHead(500); res.end(String(e)); }
    }
  });
  srv.on("error", reject);
  srv.listen(0, "127.0.0.1", () => {
    host.port = srv.address().port;
    host.close = () => {
      host.serve = null;
      host.resume();
      srv.closeAllConnections();
      if (srv.listening) srv.close();
    };
    resolve(host);
  });
});
`

// startConformanceHost starts a conformanceHost, closed when the test
// ends.
func startConformanceHost(t *testing.T) js.Value {
	t.Helper()
	type result struct {
		v   js.Value
		err error
	}
	done := make(chan result, 1)
	ok := js.FuncOf(func(_ js.Value, a []js.Value) any { done <- result{v: a[0]}; return nil })
	fail := js.FuncOf(func(_ js.Value, a []js.Value) any {
		done <- result{err: errors.New(a[0].Call("toString").String())}
		return nil
	})
	defer ok.Release()
	defer fail.Release()
	js.Global().Get("Function").New(conformanceHost).Invoke().Call("then", ok, fail)
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the node.js server did not start in 10s")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { r.v.Call("close") })
	return r.v
}
