//go:build !js

package hosttest

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// UnsignedBody checks that the wasm node at w, which has a peer secret,
// refuses a PUT and a POST (a batch) that carry no signature (401) before
// their body comes: the host's shim must not read what an unsigned caller
// sends. Each request announces 1 MiB and sends none of it; the answer
// must come all the same, within ctx (or 30 s).
func UnsignedBody(t *testing.T, ctx context.Context, w Node) {
	t.Helper()
	for _, method := range []string{http.MethodPut, http.MethodPost} {
		unsignedBody(t, ctx, w, method)
	}
}

func unsignedBody(t *testing.T, ctx context.Context, w Node, method string) {
	t.Helper()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(w.Addr, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(30 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline)
	req := method + " /_geecache/scores/unsigned HTTP/1.1\r\nHost: " + strings.TrimPrefix(w.Addr, "http://") +
		"\r\nX-Geecache-Peer: 1\r\nContent-Type: application/octet-stream\r\nContent-Length: 1048576\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("an unsigned %s whose body is not sent: no answer (%v); want 401 before the body", method, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unsigned %s: %s; want 401", method, resp.Status)
	}
}
