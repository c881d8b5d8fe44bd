package nethttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/geecache/geecache/adapters/protocol"
)

// rawGet sends req with the test's own client and returns status and body.
func rawGet(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAuthOverHTTP(t *testing.T) {
	nodes := startNodes(t, 1, true, &PoolOptions{Secret: []byte("cluster secret")})
	n := nodes[0]
	ctx := context.Background()

	// Signed by a Client with the secret: 200.
	good := mustClient(t, n.addr, &ClientOptions{Secret: []byte("cluster secret")})
	defer good.CloseIdleConnections()
	if v, err := good.Get(ctx, "scores", "Tom"); err != nil || string(v) != "v:Tom" {
		t.Fatalf("signed Get = %q, %v", v, err)
	}

	// Unsigned: 401, as a raw request and through a Client.
	req, _ := http.NewRequest("GET", n.addr+protocol.Path("scores", "Sam"), nil)
	if st, body := rawGet(t, req); st != http.StatusUnauthorized {
		t.Fatalf("unsigned raw request: %d %q; want 401", st, body)
	}
	for name, c := range map[string]*Client{
		"unsigned":     mustClient(t, n.addr, nil),
		"wrong secret": mustClient(t, n.addr, &ClientOptions{Secret: []byte("guess")}),
	} {
		_, err := c.Get(ctx, "scores", "Sam")
		c.CloseIdleConnections()
		if !errors.Is(err, protocol.ErrUnauthorized) {
			t.Errorf("%s: err = %v; want ErrUnauthorized", name, err)
		}
	}

	// Tampered: a valid signature for Tom replayed on another path.
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: []byte("cluster secret")})
	if err != nil {
		t.Fatal(err)
	}
	signed := pc.NewRequest(t.Context(), "scores", "Tom")
	req, _ = http.NewRequest("GET", n.addr+protocol.Path("scores", "Sam"), nil)
	req.Header = signed.Header
	if st, body := rawGet(t, req); st != http.StatusUnauthorized {
		t.Fatalf("tampered request: %d %q; want 401", st, body)
	}
	// The same signature on its own path is fine.
	req, _ = http.NewRequest("GET", n.addr+signed.Path, nil)
	req.Header = signed.Header
	if st, body := rawGet(t, req); st != http.StatusOK || body != "v:Tom" {
		t.Fatalf("signed raw request: %d %q; want 200 v:Tom", st, body)
	}
	if c := n.db.count("Sam"); c != 0 {
		t.Fatalf("rejected requests loaded Sam %d times", c)
	}
}
