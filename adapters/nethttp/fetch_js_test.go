//go:build js && wasm

package nethttp

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"syscall/js"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// These tests need node.js (go_js_wasm_exec): they start node's own HTTP
// server on 127.0.0.1 and reach it through fetch(). Go's net/http under
// node would dial its in-process fake network instead, which is why the
// other tests of this package do not pass under GOOS=js. Run them with
//
//	PATH="$PATH:$(go env GOROOT)/lib/wasm" GOOS=js GOARCH=wasm go test -run Fetch ./adapters/nethttp/

// jsServer is the source of a node.js HTTP server that answers:
//
//	/echo   200, X-Echo: the request's X-Test header, body "METHOD PATH"
//	/big    200, 64 chunks of 16 KiB of "x" (no Content-Length)
//	/hang   nothing, ever
//	/drip   200, one chunk "first", then nothing
//
// It resolves to {port, close}.
const jsServer = `
const http = globalThis.require("http");
return new Promise((resolve, reject) => {
  const srv = http.createServer((req, res) => {
    if (req.url === "/echo") {
      res.writeHead(200, {"X-Echo": req.headers["x-test"] || "", "Content-Length": String(Buffer.byteLength(req.method + " " + req.url))});
      res.end(req.method + " " + req.url);
    } else if (req.url === "/big") {
      res.writeHead(200);
      const chunk = Buffer.alloc(16384, "x");
      let n = 0;
      const more = () => { while (n < 64) { n++; if (!res.write(chunk)) { res.once("drain", more); return; } } res.end(); };
      res.on("error", () => {});
      more();
    } else if (req.url === "/drip") {
      res.writeHead(200);
      res.write("first");
    } else if (req.url !== "/hang") {
      res.writeHead(404); res.end();
    }
  });
  srv.on("error", reject);
  srv.listen(0, "127.0.0.1", () => resolve({
    port: srv.address().port,
    close: () => { srv.closeAllConnections(); srv.close(); },
  }));
});
`

// startJSServer starts jsServer and returns its base URL.
func startJSServer(t *testing.T) string {
	t.Helper()
	p := js.Global().Get("Function").New(jsServer).Invoke()
	v, err := await(context.Background(), p, func() {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Call("close") })
	return "http://127.0.0.1:" + strconv.Itoa(v.Get("port").Int())
}

func fetchGet(t *testing.T, ctx context.Context, url string, h protocol.Header) (peerResponse, error) {
	t.Helper()
	return (&fetchTransport{}).roundTrip(ctx, "GET", url, h, nil)
}

func TestFetchTransportRoundTrip(t *testing.T) {
	base := startJSServer(t)
	resp, err := fetchGet(t, context.Background(), base+"/echo", protocol.Header{"X-Test": {"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.body.Close()
	body, err := io.ReadAll(resp.body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.status != 200 || string(body) != "GET /echo" || resp.header.Get("X-Echo") != "hello" || resp.size != 9 {
		t.Errorf("got %d %q, X-Echo %q, length %d; want 200 \"GET /echo\", hello, 9",
			resp.status, body, resp.header.Get("X-Echo"), resp.size)
	}

	resp, err = fetchGet(t, context.Background(), base+"/nope", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.body.Close()
	if resp.status != 404 {
		t.Errorf("/nope: %d; want 404", resp.status)
	}
}

// A reader that stops early gets no more than it asked for, and Close
// cancels the rest; the transport stays usable.
func TestFetchTransportBoundedRead(t *testing.T) {
	base := startJSServer(t)
	resp, err := fetchGet(t, context.Background(), base+"/big", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.size != -1 {
		t.Errorf("ContentLength = %d; want -1 (chunked)", resp.size)
	}
	got, err := io.ReadAll(io.LimitReader(resp.body, 100))
	if err != nil || len(got) != 100 {
		t.Fatalf("read %d bytes, %v; want 100", len(got), err)
	}
	resp.body.Close()
	if n, err := resp.body.Read(make([]byte, 10)); n != 0 || err == nil {
		t.Errorf("Read after Close = %d, %v; want an error", n, err)
	}

	resp, err = fetchGet(t, context.Background(), base+"/big", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.body.Close()
	n, err := io.Copy(io.Discard, resp.body)
	if err != nil || n != 64*16384 {
		t.Errorf("full body: %d bytes, %v; want %d", n, err, 64*16384)
	}
}

func TestFetchTransportCancel(t *testing.T) {
	base := startJSServer(t)

	// Before the headers arrive.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := fetchGet(t, ctx, base+"/hang", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging request: err = %v; want context.DeadlineExceeded", err)
	}

	// While the body is read.
	ctx, cancel = context.WithCancel(context.Background())
	resp, err := fetchGet(t, ctx, base+"/drip", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.body.Close()
	buf := make([]byte, 64)
	if n, err := resp.body.Read(buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("first chunk: %q, %v", buf[:n], err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := resp.body.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("stalled body: err = %v; want context.Canceled", err)
	}

	// Already cancelled: no request at all.
	if _, err := fetchGet(t, ctx, base+"/echo", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v; want context.Canceled", err)
	}
}

func TestFetchTransportUnreachable(t *testing.T) {
	base := startJSServer(t)
	// Find a closed port: the server's, after closing it.
	p := js.Global().Get("Function").New(jsServer).Invoke()
	v, err := await(context.Background(), p, func() {})
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://127.0.0.1:" + strconv.Itoa(v.Get("port").Int())
	v.Call("close")
	_, err = fetchGet(t, context.Background(), closed+"/echo", nil)
	if err == nil || !strings.Contains(err.Error(), "fetch") {
		t.Errorf("closed port: err = %v; want a fetch error", err)
	}
	// The transport still works.
	resp, err := fetchGet(t, context.Background(), base+"/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.body.Close()
}

// The fetch transport sends a request body of up to its limit (the
// client's MaxValueBytes) and refuses a longer one before any request.
func TestFetchBodyLimit(t *testing.T) {
	base := startJSServer(t)
	ft := &fetchTransport{maxBody: 4}
	if _, err := ft.roundTrip(context.Background(), "PUT", base+"/nope", nil, []byte("12345")); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("5 bytes over a limit of 4: err = %v; want a refusal", err)
	}
	resp, err := ft.roundTrip(context.Background(), "PUT", base+"/echo", nil, []byte("1234"))
	if err != nil {
		t.Fatalf("4 bytes, limit 4: %v", err)
	}
	resp.body.Close()
	if resp.status != 200 {
		t.Errorf("4 bytes, limit 4: status %d; want 200", resp.status)
	}
}
