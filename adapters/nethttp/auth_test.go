package nethttp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
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
	nodes := startNodes(t, 1, true, &PoolOptions{Cluster: Cluster{Secret: []byte("cluster secret")}})
	n := nodes[0]
	ctx := context.Background()

	// Signed by a Client with the secret: 200.
	good := mustClient(t, n.addr, &ClientOptions{Secret: []byte("cluster secret")})
	defer good.CloseIdleConnections()
	if v, _, err := good.Get(ctx, "scores", "Tom"); err != nil || string(v) != "v:Tom" {
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
		_, _, err := c.Get(ctx, "scores", "Sam")
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
	signed := pc.NewRequest(t.Context(), n.addr, "scores", "Tom")
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

// A request signed for one node is rejected by another: the signature
// covers the target's base URL, which each node knows as its Self.
func TestSignatureBoundToTheTargetNode(t *testing.T) {
	secret := []byte("cluster secret")
	nodes := startNodes(t, 2, true, &PoolOptions{Cluster: Cluster{Secret: secret}})
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range nodes {
		for _, signedFor := range nodes {
			preq := pc.NewRequest(t.Context(), signedFor.addr, "scores", "Tom")
			req, _ := http.NewRequest("GET", to.addr+preq.Path, nil)
			req.Header = preq.Header
			st, body := rawGet(t, req)
			if want := map[bool]int{true: 200, false: 401}[to == signedFor]; st != want {
				t.Errorf("signed for %s, sent to %s: %d %q; want %d", signedFor.addr, to.addr, st, body, want)
			}
		}
	}
}

func TestSecretNeedsSelf(t *testing.T) {
	reg := cache.NewRegistry()
	if _, err := newHandler(reg, &handlerOptions{Secret: []byte("k")}); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("newHandler with a Secret and no Self: %v; want ErrConfig", err)
	}
	if _, err := newHandler(reg, &handlerOptions{Secret: []byte("k"), Self: "ftp://x"}); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("newHandler with a bad Self: %v; want ErrConfig", err)
	}
	// A client-only pool (no self) with a secret serves nothing: no
	// request can be signed for it.
	p, err := NewPool("", reg, &PoolOptions{Cluster: Cluster{Secret: []byte("k")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pc, err := protocol.NewClient(&protocol.ClientOptions{Secret: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	preq := pc.NewRequest(t.Context(), "", "scores", "Tom")
	req := httptest.NewRequest("GET", preq.Path, nil)
	req.Header = preq.Header
	w := httptest.NewRecorder()
	p.ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("client-only pool: %d %q; want 401", w.Code, w.Body)
	}
}
