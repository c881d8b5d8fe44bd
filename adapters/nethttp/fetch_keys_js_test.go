//go:build js && wasm

package nethttp

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
	"testing"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/keytest"
)

// protoServer is the source of a node.js HTTP server that reads each
// request's body and answers with serve(method, url, headers, body), a Go
// function returning a Promise of {status, headers, body}. It resolves to {port, close}.
const protoServer = `
const http = globalThis.require("http");
return new Promise((resolve, reject) => {
  const srv = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      serve(req.method, req.url, req.headers, Buffer.concat(chunks)).then((r) => {
        res.writeHead(r.status, r.headers);
        res.end(r.body);
      });
    });
  });
  srv.on("error", reject);
  srv.listen(0, "127.0.0.1", () => resolve({
    port: srv.address().port,
    close: () => { srv.closeAllConnections(); srv.close(); },
  }));
});
`

var fetchSecret = []byte("fetch test secret")

// protoNode is a protocol.Server (with fetchSecret) behind node.js's HTTP
// server: a real server on 127.0.0.1, reached over TCP by fetch(). Its
// group "scores" answers "v="+key for every key but "missing", which its
// source does not have.
type protoNode struct {
	base string

	mu    sync.Mutex
	paths []string // the raw request paths, as node.js received them
}

func startProtoNode(t *testing.T) *protoNode {
	t.Helper()
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 256<<20, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if key == "missing" {
			return nil, getter.ErrNotFound
		}
		return []byte("v=" + key), nil
	}), nil); err != nil {
		t.Fatal(err)
	}
	n := &protoNode{}
	var srv *protocol.Server // set once the port is known, before any request
	// serve answers in a goroutine and returns a Promise, as a host's
	// function must: Go code that waits on JavaScript (the server's log
	// writes to stderr do) would deadlock inside the callback itself.
	serve := js.FuncOf(func(_ js.Value, args []js.Value) any {
		path := args[1].String()
		n.mu.Lock()
		n.paths = append(n.paths, path)
		n.mu.Unlock()
		req := protocol.Request{Method: args[0].String(), Path: path, Header: protocol.Header{}}
		entries := js.Global().Get("Object").Call("entries", args[2])
		for i := range entries.Length() {
			req.Header.Add(entries.Index(i).Index(0).String(), entries.Index(i).Index(1).String())
		}
		if l := args[3].Get("byteLength").Int(); l > 0 {
			req.Body = make([]byte, l)
			js.CopyBytesToGo(req.Body, args[3])
		}
		var resolve js.Value
		executor := js.FuncOf(func(_ js.Value, a []js.Value) any { resolve = a[0]; return nil })
		p := js.Global().Get("Promise").New(executor)
		executor.Release()
		go func() { resolve.Invoke(responseToJS(srv.Serve(context.Background(), req))) }()
		return p
	})
	t.Cleanup(serve.Release)
	v, err := await(context.Background(), js.Global().Get("Function").New("serve", protoServer).Invoke(serve), func() {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Call("close") })
	n.base = "http://127.0.0.1:" + strconv.Itoa(v.Get("port").Int())
	if srv, err = protocol.NewServer(reg, &protocol.ServerOptions{Secret: fetchSecret, Self: n.base}); err != nil {
		t.Fatal(err)
	}
	return n
}

// responseToJS turns r into {status, headers, body}.
func responseToJS(r protocol.Response) js.Value {
	hdr := js.Global().Get("Object").New()
	for k, vs := range r.Header {
		hdr.Set(k, strings.Join(vs, ", "))
	}
	hdr.Set("Content-Length", strconv.Itoa(r.Len()))
	var body bytes.Buffer
	_, _ = r.WriteTo(&body)
	jsBody := js.Global().Get("Uint8Array").New(body.Len())
	js.CopyBytesToJS(jsBody, body.Bytes())
	out := js.Global().Get("Object").New()
	out.Set("status", r.Status)
	out.Set("headers", hdr)
	out.Set("body", jsBody)
	return out
}

func (n *protoNode) requests() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.paths)
}

func (n *protoNode) lastPath() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.paths) == 0 {
		return ""
	}
	return n.paths[len(n.paths)-1]
}

// Every key, "." and ".." included, reaches a node through fetch() as
// itself: a signed Get returns that key's value, and node.js received
// exactly the path the protocol wrote (a WHATWG URL parser resolves "%2E"
// and "%2E%2E" away, so under the older form "." asked for "" and ".."
// for no key at all).
func TestFetchKeysRoundTrip(t *testing.T) {
	n := startProtoNode(t)
	c := mustClient(t, n.base, &ClientOptions{Secret: fetchSecret})
	for i, key := range keytest.Keys(rand.New(rand.NewPCG(15, 2)), 300) {
		v, _, err := peerGet(t.Context(), c, "scores", key)
		if err != nil || string(v) != "v="+key {
			t.Fatalf("key #%d %q: %q, %v; node.js got the path %q, the protocol's is %q",
				i, key, v, err, n.lastPath(), protocol.Path("scores", key))
		}
		if got := n.lastPath(); got != protocol.Path("scores", key) {
			t.Fatalf("key #%d %q: node.js got the path %q; want %q", i, key, got, protocol.Path("scores", key))
		}
	}
	if _, _, err := peerGet(t.Context(), c, "scores", "missing"); !errors.Is(err, getter.ErrNotFound) {
		t.Errorf("missing key: %v; want getter.ErrNotFound", err)
	}
}

// The WHATWG URL parser itself (URL and Request, what fetch() uses) keeps
// every path the protocol writes as it is.
func TestFetchURLParserKeepsPaths(t *testing.T) {
	const base = "http://127.0.0.1:8001"
	urlCtor, request := js.Global().Get("URL"), js.Global().Get("Request")
	for i, key := range keytest.Keys(rand.New(rand.NewPCG(15, 3)), 1000) {
		for _, group := range []string{"scores", ".", ".."} {
			p := protocol.Path(group, key)
			if got := urlCtor.New(p, base+"/ignored").Get("pathname").String(); got != p {
				t.Fatalf("key #%d %q: new URL(%q, base).pathname = %q", i, key, p, got)
			}
			if got := request.New(base + p).Get("url").String(); got != base+p {
				t.Fatalf("key #%d %q: new Request(%q).url = %q", i, key, base+p, got)
			}
		}
	}
}

// A value over 1 MiB is Set from js/wasm through fetch() (the transport
// sends bodies up to the client's MaxValueBytes), and read back; one over
// the client's limit is refused before anything is sent.
func TestFetchSetOverOneMiB(t *testing.T) {
	n := startProtoNode(t)
	const limit = 3 << 20
	c := mustClient(t, n.base, &ClientOptions{Secret: fetchSecret, MaxValueBytes: limit})
	big := bytes.Repeat([]byte("0123456789abcdef"), (2<<20)/16+1) // 2 MiB + 16 bytes
	if err := peerSet(t.Context(), c, "scores", "big", big, 0); err != nil {
		t.Fatalf("Set of %d bytes: %v", len(big), err)
	}
	if v, _, err := peerGet(t.Context(), c, "scores", "big"); err != nil || !bytes.Equal(v, big) {
		t.Fatalf("Get after Set: %d bytes, %v; want the %d bytes set", len(v), err, len(big))
	}
	// A Pool's clients get the same default transport, with the Pool's
	// MaxValueBytes.
	pool, err := NewPool("", cache.NewRegistry(), &PoolOptions{Cluster: Cluster{Secret: fetchSecret, MaxValueBytes: limit}})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Set(n.base); err != nil {
		t.Fatal(err)
	}
	peer, ok := pool.PickPeer("big2")
	if !ok {
		t.Fatal("a client-only pool owns a key")
	}
	if err := peerSet(t.Context(), peer.(*Client), "scores", "big2", big, 0); err != nil {
		t.Fatalf("Set of %d bytes through a Pool: %v", len(big), err)
	}
	if v, _, err := peerGet(t.Context(), c, "scores", "big2"); err != nil || !bytes.Equal(v, big) {
		t.Fatalf("Get after the Pool's Set: %d bytes, %v; want the %d bytes set", len(v), err, len(big))
	}

	sent := n.requests()
	if err := peerSet(t.Context(), c, "scores", "huge", make([]byte, limit+1), 0); err == nil {
		t.Fatalf("Set of %d bytes over a limit of %d: no error", limit+1, limit)
	}
	if v, _, err := peerGet(t.Context(), c, "scores", "huge"); err != nil || string(v) != "v=huge" {
		t.Fatalf("Get of the refused key: %q, %v; want the source's v=huge", v, err)
	}
	if got := n.requests() - sent; got != 1 {
		t.Errorf("%d requests after the refused Set; want 1 (the Get)", got)
	}
}
