//go:build js && wasm

package wasmjs

import (
	"context"
	"errors"
	"fmt"
	"github.com/geecache/geecache/internal/peertest"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Run under node with
//
//	PATH="$PATH:$(go env GOROOT)/lib/wasm" GOOS=js GOARCH=wasm go test ./adapters/wasmjs/

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		// A released Func's worker ends once the Func is collected.
		runtime.GC()
		// The js/wasm runtime keeps a goroutine for JavaScript callbacks.
		if err := goleak.Find(goleak.IgnoreAnyFunction("runtime.handleEvent")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// batchWorkers counts the goroutines that wait for a Func's next batch.
func batchWorkers() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "wasmjs.(*host).awaitBatch(")
}

// A Func keeps one goroutine between batches, waiting for the next one;
// once the Func is released (and collected: the one reference to what it
// calls is dropped by Release), that goroutine ends: no goroutine is left
// behind.
func TestReleaseStopsTheBatchWorker(t *testing.T) {
	srv, _ := newServer(t, false)
	others := goleak.IgnoreCurrent()
	f := Func(srv)
	const get = "GET\n/_geecache/scores/Tom"
	out := f.Invoke(get+"\x00"+get, js.Undefined())
	for i := range 2 {
		v, err := await(t, out.Index(i))
		if err != nil || v.Get("status").Int() != 200 || bodyOf(v.Get("body")) != "630" {
			t.Fatalf("batch answer %d: %v, %v; want 200 630", i, v, err)
		}
	}
	if n := batchWorkers(); n != 1 {
		t.Fatalf("%d goroutines wait for the next batch; want the 1 the Func keeps", n)
	}
	f.Release()
	runtime.GC()
	if err := goleak.Find(others, goleak.IgnoreAnyFunction("runtime.handleEvent")); err != nil {
		t.Errorf("after Release: %v", err)
	}
}

var secret = []byte("test secret")

// self is the node the tests' signed requests are for.
const self = "http://wasm-node.invalid"

// newServer returns the nethttp.Pool of node self for a registry with the
// group "scores" (Tom 630, and "slow", which waits for its context or
// 50ms) and a count of the Getter's calls. It is the one place the tests
// build the handler Func serves with.
func newServer(t *testing.T, withSecret bool) (*nethttp.Pool, *atomic.Int64) {
	t.Helper()
	var loads atomic.Int64
	reg := cache.NewRegistry()
	_, err := reg.NewGroup("scores", 1<<20, getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		loads.Add(1)
		if key == "slow" {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
		return getter.Map(map[string]string{"Tom": "630", "slow": "done"}).Get(ctx, key)
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := &nethttp.PoolOptions{}
	if withSecret {
		o = &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: secret}}
	}
	srv, err := nethttp.NewPool(self, reg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, &loads
}

// await waits (bounded) for a promise to settle.
func await(t *testing.T, p js.Value) (js.Value, error) {
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
	// A request answered at once comes back as it is, not as a Promise.
	js.Global().Get("Promise").Call("resolve", p).Call("then", ok, fail)
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("promise did not settle in 10s")
		return js.Undefined(), nil
	}
}

type response struct {
	status int
	header map[string]string
	body   string
}

func call(t *testing.T, f js.Func, args ...any) response {
	t.Helper()
	v, err := await(t, f.Invoke(args...))
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: v.Get("status").Int(), header: map[string]string{}}
	keys := js.Global().Get("Object").Call("keys", v.Get("headers"))
	for i := range keys.Length() {
		k := keys.Index(i).String()
		r.header[k] = v.Get("headers").Get(k).String()
	}
	r.body = bodyOf(v.Get("body"))
	return r
}

// bodyOf reads an answer's body: a string (sent as UTF-8) or a Uint8Array.
func bodyOf(v js.Value) string {
	if v.Type() == js.TypeString {
		return v.String()
	}
	b := make([]byte, v.Get("byteLength").Int())
	js.CopyBytesToGo(b, v)
	return string(b)
}

func TestServe(t *testing.T) {
	srv, _ := newServer(t, false)
	f := Func(srv)
	defer f.Release()
	for _, tc := range []struct {
		method, path string
		status       int
		code, body   string
	}{
		{"GET", "/_geecache/scores/Tom", 200, "", "630"},
		{"GET", "/_geecache/scores/kkk", 404, "not_found", ""},
		{"GET", "/_geecache/nope/Tom", 404, "unknown_group", ""},
		{"GET", "/elsewhere", 400, "bad_request", ""},
		{"PATCH", "/_geecache/scores/Tom", 405, "method_not_allowed", ""},
		{"POST", "/_geecache/scores/!get", 400, "bad_request", ""}, // not a peer's: no X-Geecache-Peer
	} {
		r := call(t, f, tc.method, tc.path, map[string]any{})
		if r.status != tc.status || r.header[protocol.HeaderError] != tc.code ||
			(tc.body != "" && r.body != tc.body) || r.header["Content-Length"] != strconv.Itoa(len(r.body)) {
			t.Errorf("%s %s = %d %v %q; want %d, code %q, body %q", tc.method, tc.path, r.status, r.header, r.body, tc.status, tc.code, tc.body)
		}
	}
}

func TestServeRejectsBadArguments(t *testing.T) {
	srv, _ := newServer(t, false)
	f := Func(srv)
	defer f.Release()
	for _, args := range [][]any{
		{"GET"},
		{"GET", 42, map[string]any{}},
		{"GET", "/_geecache/scores/Tom", "headers"},
		{"GET", "/_geecache/scores/Tom", nil, "not a signal"},
	} {
		if _, err := await(t, f.Invoke(args...)); err == nil {
			t.Errorf("serve%v resolved; want a TypeError", args)
		}
	}
}

// A signed request is accepted with its headers as a plain object (node)
// or a Headers object (Fetch API); an unsigned one is refused.
func TestServeHeaders(t *testing.T) {
	srv, _ := newServer(t, true)
	f := Func(srv)
	defer f.Release()
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	req := pc.NewRequest(t.Context(), self, "scores", "Tom", false)

	plain := map[string]any{}
	headers := js.Global().Get("Headers").New()
	for k, vs := range req.Header {
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
			headers.Call("append", k, v)
		}
		plain[k] = arr
	}
	for name, h := range map[string]any{"object": plain, "Headers": headers} {
		if r := call(t, f, "GET", req.Path, h); r.status != 200 || r.body != "630" {
			t.Errorf("signed, headers as %s: %d %q; want 200 630", name, r.status, r.body)
		}
	}
	if r := call(t, f, "GET", req.Path, nil); r.status != http.StatusUnauthorized {
		t.Errorf("unsigned: %d; want 401", r.status)
	}
}

// Concurrent calls from the event loop all return at once and share one
// load: the function never blocks the host.
func TestServeConcurrent(t *testing.T) {
	srv, loads := newServer(t, false)
	f := Func(srv)
	defer f.Release()
	promises := make([]any, 20)
	for i := range promises {
		promises[i] = f.Invoke("GET", "/_geecache/scores/slow", js.Null())
	}
	all, err := await(t, js.Global().Get("Promise").Call("all", promises))
	if err != nil {
		t.Fatal(err)
	}
	for i := range all.Length() {
		if st := all.Index(i).Get("status").Int(); st != 200 {
			t.Errorf("call %d: status %d", i, st)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("%d loads for 20 concurrent calls; want 1", n)
	}
}

// An aborted signal ends the load.
func TestServeAbort(t *testing.T) {
	srv, _ := newServer(t, false)
	f := Func(srv)
	defer f.Release()
	ac := js.Global().Get("AbortController").New()
	p := f.Invoke("GET", "/_geecache/scores/slow", js.Null(), ac.Get("signal"))
	ac.Call("abort")
	v, err := await(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if st := v.Get("status").Int(); st != 500 {
		t.Errorf("aborted load: status %d; want 500 (the load was abandoned)", st)
	}
}

// nodeServer is a node.js http server that answers every request with
// serve, as a JavaScript host would; it resolves to {port, close}.
const nodeServer = `
const http = globalThis.require("http");
return new Promise((resolve) => {
  const srv = http.createServer(async (req, res) => {
    const ac = new AbortController();
    res.on("close", () => ac.abort());
    const r = await serve(req.method, req.url.split("?")[0], req.headers, ac.signal);
    res.writeHead(r.status, r.headers);
    res.end(r.body);
  });
  srv.listen(0, "127.0.0.1", () => resolve({port: srv.address().port, close: () => { srv.closeAllConnections(); srv.close(); }}));
});
`

// A nethttp.Client under js (fetch) reaches a node served by node.js's
// http module through Func.
func TestServeBehindNodeHTTP(t *testing.T) {
	srv, loads := newServer(t, false)
	f := Func(srv)
	defer f.Release()
	v, err := await(t, js.Global().Get("Function").New("serve", nodeServer).Invoke(f))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Call("close")
	c, err := nethttp.NewClient("http://127.0.0.1:"+strconv.Itoa(v.Get("port").Int()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			got, _, err := peertest.Get(context.Background(), c, "scores", "Tom")
			if err != nil || string(got) != "630" {
				t.Errorf("Get(Tom) = %q, %v; want 630", got, err)
			}
		})
	}
	wg.Wait()
	if _, _, err := peertest.Get(context.Background(), c, "scores", "kkk"); !errors.Is(err, getter.ErrNotFound) {
		t.Errorf("Get(kkk) err = %v; want getter.ErrNotFound", err)
	}
	if n := loads.Load(); n != 2 {
		t.Errorf("%d loads; want 2 (Tom once, kkk once)", n)
	}
}

// A request answered from memory comes back in the same call, as the
// answer itself: no Promise to make and settle. One that has to wait (a
// load runs on a worker goroutine, so a miss may or may not be done after
// the one yield, and a missing key is never held) may come as a Promise;
// one whose load waits on a timer always does, settled when it is done.
func TestServeAnswersAtOnce(t *testing.T) {
	srv, _ := newServer(t, false)
	f := Func(srv)
	defer f.Release()
	promise := js.Global().Get("Promise")
	if r := call(t, f, "GET", "/_geecache/scores/Tom", js.Null()); r.status != 200 || r.body != "630" {
		t.Fatalf("Tom: %d %q; want 200 630", r.status, r.body)
	}
	for range 3 { // Tom is held now: a hit never waits
		v := f.Invoke("GET", "/_geecache/scores/Tom", js.Null())
		if v.InstanceOf(promise) || v.Get("status").Type() != js.TypeNumber {
			t.Fatalf("Tom (held): serve returned %s; want the answer itself", js.Global().Get("String").Invoke(v).String())
		}
		if v.Get("status").Int() != 200 || bodyOf(v.Get("body")) != "630" {
			t.Fatalf("Tom (held): %d %q; want 200 630", v.Get("status").Int(), bodyOf(v.Get("body")))
		}
	}
	if r := call(t, f, "GET", "/_geecache/scores/kkk", js.Null()); r.status != 404 { // either form, awaited
		t.Errorf("kkk: %d; want 404", r.status)
	}
	if p := f.Invoke("GET", "/_geecache/scores/slow", js.Null()); !p.InstanceOf(promise) {
		t.Fatal("a load that waits: serve did not return a Promise")
	} else if v, err := await(t, p); err != nil || v.Get("status").Int() != 200 {
		t.Fatalf("slow: %v, %v; want 200", v, err)
	}
}

// node's rawHeaders (names and values in turn, in one array) are read as
// the headers; a name without its value is refused.
func TestServeRawHeaders(t *testing.T) {
	srv, _ := newServer(t, true)
	f := Func(srv)
	defer f.Release()
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	req := pc.NewRequest(t.Context(), self, "scores", "Tom", false)
	var raw []any
	for k, vs := range req.Header {
		for _, v := range vs {
			raw = append(raw, k, v)
		}
	}
	if r := call(t, f, "GET", req.Path, raw); r.status != 200 || r.body != "630" {
		t.Errorf("signed, rawHeaders: %d %q; want 200 630", r.status, r.body)
	}
	if r := call(t, f, "GET", req.Path, raw[:len(raw)-2]); r.status != http.StatusUnauthorized {
		t.Errorf("rawHeaders without the last header: %d; want 401", r.status)
	}
	if _, err := await(t, f.Invoke("GET", req.Path, raw[:len(raw)-1])); err == nil {
		t.Error("rawHeaders with a name and no value: resolved; want a TypeError")
	}
}

// A peer's PUT (its Group.Set) comes with the value as the body, a
// Uint8Array: a signed one stores it; a body altered on the way, or
// a body of the wrong type, is refused.
func TestServePut(t *testing.T) {
	srv, _ := newServer(t, true)
	f := Func(srv)
	defer f.Release()
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	body := func(s string) js.Value {
		u := js.Global().Get("Uint8Array").New(len(s))
		js.CopyBytesToJS(u, []byte(s))
		return u
	}
	put := func(key, value, sent string) response {
		req := pc.NewSetRequest(t.Context(), self, "scores", key, []byte(value), 0)
		plain := map[string]any{}
		for k, vs := range req.Header {
			plain[k] = vs[0]
		}
		return call(t, f, "PUT", req.Path, plain, js.Null(), body(sent))
	}
	if r := put("Ann", "512", "512"); r.status != 200 {
		t.Fatalf("PUT Ann: %d %q; want 200", r.status, r.body)
	}
	get := pc.NewRequest(t.Context(), self, "scores", "Ann", false)
	plain := map[string]any{}
	for k, vs := range get.Header {
		plain[k] = vs[0]
	}
	if r := call(t, f, "GET", get.Path, plain); r.status != 200 || r.body != "512" {
		t.Errorf("GET Ann after the PUT: %d %q; want 200 512", r.status, r.body)
	}
	if r := put("Bob", "400", "401"); r.status != http.StatusBadRequest {
		t.Errorf("PUT with an altered body: %d %q; want 400", r.status, r.body)
	}
	if _, err := await(t, f.Invoke("PUT", "/_geecache/scores/Bob", map[string]any{}, js.Null(), "400")); err == nil {
		t.Error("PUT with a string body: resolved; want a TypeError")
	}
}

// A value that is valid UTF-8 comes as a string, which every host sends
// as UTF-8, so as the same bytes; any other as a Uint8Array. Either way
// the bytes and Content-Length are the value's.
func TestServeBodyBytes(t *testing.T) {
	values := map[string]string{
		"plain":   "630",
		"escapes": "a\"b\\c\n\r\t\x01\x1f</script>\u2028é€😀",
		"binary":  "\xff\xfe\x00\x80ok",
		"cut":     "€"[:2], // a UTF-8 sequence cut short
	}
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("v", 1<<20, getter.Map(values), nil); err != nil {
		t.Fatal(err)
	}
	pool, err := nethttp.NewPool(self, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	f := Func(pool)
	defer f.Release()
	for key, want := range values {
		v, err := await(t, f.Invoke("GET", "/_geecache/v/"+key, js.Null()))
		if err != nil {
			t.Fatal(err)
		}
		body := v.Get("body")
		if isString := body.Type() == js.TypeString; isString != (key == "plain" || key == "escapes") {
			t.Errorf("%s: body is a string: %v; want a string only for valid UTF-8", key, isString)
		}
		var got []byte
		if body.Type() == js.TypeString { // as a host sends it
			u := js.Global().Get("TextEncoder").New().Call("encode", body)
			got = make([]byte, u.Length())
			js.CopyBytesToGo(got, u)
		} else {
			got = []byte(bodyOf(body))
		}
		if string(got) != want || v.Get("headers").Get("Content-Length").String() != strconv.Itoa(len(want)) {
			t.Errorf("%s: body %q, Content-Length %s; want %q, %d", key, got, v.Get("headers").Get("Content-Length"), want, len(want))
		}
	}
	if v, err := await(t, f.Invoke("GET", "/_geecache/v/missing", js.Null())); err != nil || v.Get("status").Int() != 404 {
		t.Errorf("missing: %v, %v; want 404", v, err)
	}
}

// serve(batch, signals, bodies) answers many requests in one call: each
// ready answer as it is, a load that waits as a Promise, a malformed
// request as a rejected Promise, a PUT with its body, a value that is not
// UTF-8 as a Uint8Array; an aborted signal abandons its request's load.
func TestServeBatch(t *testing.T) {
	srv, _ := newServer(t, true)
	f := Func(srv)
	defer f.Release()
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	line := func(r protocol.Request) string {
		s := r.Method + "\n" + r.Path
		for k, vs := range r.Header {
			for _, v := range vs {
				s += "\n" + k + "\n" + v
			}
		}
		return s
	}
	get := func(key string) string { return line(pc.NewRequest(t.Context(), self, "scores", key, false)) }
	put := pc.NewSetRequest(t.Context(), self, "scores", "bin", []byte("\xff\x00"), 0)
	ac := js.Global().Get("AbortController").New()
	ac.Call("abort")
	reqs := []string{get("Tom"), get("kkk"), get("slow"), "GET", line(put), get("slow"), "GET\n/_geecache/scores/Tom"}
	signals := []any{nil, nil, nil, nil, nil, ac.Get("signal"), nil}
	u := js.Global().Get("Uint8Array").New(2)
	js.CopyBytesToJS(u, put.Body)
	bodies := []any{nil, nil, nil, nil, u, nil, nil}
	out := f.Invoke(strings.Join(reqs, "\x00"), signals, bodies)
	if out.Length() != len(reqs) {
		t.Fatalf("%d answers for %d requests", out.Length(), len(reqs))
	}
	promise := js.Global().Get("Promise")
	// The last is refused, and logged: a write to stderr waits on
	// JavaScript, so its answer may come later.
	for i, ready := range []bool{true, true, false, false, true, false} {
		if got := !out.Index(i).InstanceOf(promise); got != ready {
			t.Errorf("answer %d: ready at once %v; want %v", i, got, ready)
		}
	}
	want := []struct {
		status int
		body   string
	}{{200, "630"}, {404, ""}, {200, "done"}, {0, ""}, {200, ""}, {500, ""}, {401, ""}}
	settled, err := await(t, promise.Call("allSettled", out)) // handles every rejection at once
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		s := settled.Index(i)
		if w.status == 0 {
			if s.Get("status").String() != "rejected" {
				t.Errorf("answer %d (malformed): %s; want rejected", i, s.Get("status"))
			}
			continue
		}
		v := s.Get("value")
		if s.Get("status").String() != "fulfilled" || v.Get("status").Int() != w.status || (w.body != "" && bodyOf(v.Get("body")) != w.body) {
			t.Errorf("answer %d: %s %v; want %d %q", i, s.Get("status"), s.Get("reason"), w.status, w.body)
		}
	}
	// The PUT stored its value; it is not UTF-8, so it comes as bytes. A
	// batch of one request:
	v, err := await(t, f.Invoke(get("bin"), js.Null()).Index(0))
	if err != nil || v.Get("status").Int() != 200 || v.Get("body").Type() == js.TypeString || bodyOf(v.Get("body")) != "\xff\x00" {
		t.Fatalf("bin after the batched PUT: %v, %v; want 200 and its bytes", v, err)
	}
}
