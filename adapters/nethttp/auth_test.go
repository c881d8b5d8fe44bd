//go:build !js

package nethttp

import (
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
	preq := pc.NewRequest(t.Context(), "", "scores", "Tom", false)
	req := httptest.NewRequest("GET", preq.Path, nil)
	req.Header = preq.Header
	w := httptest.NewRecorder()
	p.ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("client-only pool: %d %q; want 401", w.Code, w.Body)
	}
}
