//go:build !js

package nethttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// checkBadRequest fails the test unless resp is the protocol's 400
// bad_request, which a protocol client takes for ErrBadRequest (sealed:
// not an integrity failure).
func checkBadRequest(t *testing.T, what, path string, secret []byte, resp *http.Response) {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get(protocol.HeaderError) != string(protocol.CodeBadRequest) {
		t.Fatalf("%s: %d, code %q; want 400 %s", what, resp.StatusCode, resp.Header.Get(protocol.HeaderError), protocol.CodeBadRequest)
	}
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	_, err = pc.ReadResponse(context.Background(), protocol.Request{Method: "GET", Path: path, Header: http.Header{}},
		resp.StatusCode, resp.Header, resp.ContentLength, resp.Body)
	if !errors.Is(err, protocol.ErrBadRequest) || errors.Is(err, protocol.ErrBadResponse) {
		t.Fatalf("%s: a protocol client reads %v; want ErrBadRequest, not a bad response", what, err)
	}
}

// A path with an invalid escape is malformed (PROTOCOL.md: 400
// bad_request). net/http refuses such a request line before any handler
// sees it; a Server answers it as the protocol says.
func TestBadEscapeGetsTheProtocolsBadRequest(t *testing.T) {
	direct, _ := serve(t, NewServer("", newTestPool(t, &PoolOptions{}), nil))
	mux := http.NewServeMux() // as the README mounts a pool beside an API
	mux.Handle("/_geecache/", newTestPool(t, &PoolOptions{}))
	routed, _ := serve(t, NewServer("", mux, nil))
	secret := []byte("0123456789abcdef0123456789abcdef")
	signed, _ := serve(t, NewServer("", newTestPool(t, &PoolOptions{Cluster: Cluster{Secret: secret}}), nil))
	t.Run("pool", func(t *testing.T) { checkBadEscapes(t, direct, nil) })
	t.Run("router", func(t *testing.T) { checkBadEscapes(t, routed, nil) })
	t.Run("signed pool", func(t *testing.T) { checkBadEscapes(t, signed, secret) })
}

func checkBadEscapes(t *testing.T, addr string, secret []byte) {
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second} // a bound
	defer hc.CloseIdleConnections()
	for _, path := range []string{"/_geecache/scores/%zz", "/_geecache/%zz/Tom", "/_geecache/scores/%"} {
		// A raw request.
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // a bound, not a timing assertion
		if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: node\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkBadRequest(t, "raw "+path, path, secret, resp)
		if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("raw %s: after the answer: %d bytes, %v; want the connection closed", path, n, err)
		}
		_ = c.Close()

		// Through an http.Client (the path as it is, in URL.Opaque).
		req, err := http.NewRequest("GET", "http://"+addr+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = path
		resp, err = hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		checkBadRequest(t, "http.Client "+path, path, secret, resp)
	}
	// The node still answers well-formed requests (unsigned ones are
	// refused by a node with a secret).
	resp, err := hc.Get("http://" + addr + "/_geecache/scores/Tom")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if want := map[bool]int{true: 200, false: 401}[secret == nil]; resp.StatusCode != want {
		t.Fatalf("GET Tom: %d; want %d", resp.StatusCode, want)
	}
}

// A Server rewrites net/http's plain answer to a request that does not
// parse, and nothing else: a handler's body that holds the same bytes
// (a cached value can hold any bytes) reaches the client as it is, even
// when net/http hands it to the connection in a Write of its own, as it
// does with a large body after the header is out.
func TestHandlersBytesThatLookLikeNetHTTPsRefusalAreSentAsTheyAre(t *testing.T) {
	refusal := netHTTPBadRequestLine + netHTTPErrorHeaders + "400 Bad Request"
	body := []byte(refusal + strings.Repeat("v", 8<<10)) // past net/http's buffers: a Write of its own
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // the header out: the body starts a Write
		_, _ = w.Write(body)
	})
	addr, _ := serve(t, NewServer("", h, nil))
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second} // a bound
	defer hc.CloseIdleConnections()
	for i := range 2 { // a new connection, then a kept-alive one
		resp, err := hc.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, body) {
			t.Fatalf("request %d: %d, %d bytes, %v; want 200 and the handler's %d bytes as they are (got %.60q)",
				i, resp.StatusCode, len(got), err, len(body), got)
		}
	}
}
