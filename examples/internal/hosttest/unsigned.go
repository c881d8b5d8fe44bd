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

// UnsignedPut checks that the wasm node at w refuses a PUT that carries
// no signature (401) before its body comes: the host's shim must not read
// a value an unsigned caller sends. The request announces 1 MiB and sends
// none of it; the answer must come all the same, within ctx (or 30 s).
func UnsignedPut(t *testing.T, ctx context.Context, w Node) {
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
	req := "PUT /_geecache/scores/unsigned HTTP/1.1\r\nHost: " + strings.TrimPrefix(w.Addr, "http://") +
		"\r\nX-Geecache-Peer: 1\r\nContent-Type: application/octet-stream\r\nContent-Length: 1048576\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("an unsigned PUT whose body is not sent: no answer (%v); want 401 before the body", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unsigned PUT: %s; want 401", resp.Status)
	}
}
