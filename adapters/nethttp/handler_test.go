//go:build !js

package nethttp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

func newRegistry(t *testing.T, g getter.Getter) *cache.Registry {
	t.Helper()
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<20, g, nil); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestHandlerStatusesOverHTTP(t *testing.T) {
	reg := newRegistry(t, getter.Map(map[string]string{"Tom": "630", "a/b c": "slash"}))
	srv := httptest.NewServer(mustHandler(t, reg, nil))
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/_geecache/scores/Tom", 200, "630"},
		{"GET", "/_geecache/scores/a%2Fb%20c", 200, "slash"},
		{"GET", "/_geecache/scores/kkk", 404, "key not found"},
		{"GET", "/_geecache/nope/Tom", 404, "no such group"},
		{"GET", "/_geecache/scores/a/b", 400, "malformed"},
		{"GET", "/elsewhere", 400, "malformed"},
		{"PATCH", "/_geecache/scores/Tom", 405, "use GET"},
		{"POST", "/_geecache/scores/!get", 400, "peer request"},
		{"PUT", "/_geecache/scores/Tom", 400, "peer request"},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		st, body := rawGet(t, req)
		if st != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("%s %s = %d %q; want %d containing %q", tc.method, tc.path, st, body, tc.status, tc.body)
		}
	}
}

func TestMountedUnderPrefix(t *testing.T) {
	reg := newRegistry(t, getter.Map(map[string]string{"k/1": "one"}))
	mux := http.NewServeMux()
	mux.Handle("/cache/", mustHandler(t, reg, &handlerOptions{BasePath: "/cache"}))
	mux.Handle("/strip/", http.StripPrefix("/strip", mustHandler(t, reg, nil)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for name, c := range map[string]*Client{
		"base path":    mustClient(t, srv.URL, &ClientOptions{BasePath: "/cache"}),
		"strip prefix": mustClient(t, srv.URL+"/strip/", nil),
	} {
		v, _, err := peerGet(context.Background(), c, "scores", "k/1")
		c.CloseIdleConnections()
		if err != nil || string(v) != "one" {
			t.Errorf("%s: Get = %q, %v", name, v, err)
		}
	}
	// A client with the wrong base path reaches the mux's 404, which is not
	// a protocol answer and must not look like "not found".
	c := mustClient(t, srv.URL, nil)
	defer c.CloseIdleConnections()
	if _, _, err := peerGet(context.Background(), c, "scores", "k/1"); !errors.Is(err, protocol.ErrBadResponse) || errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("wrong base path: err = %v; want ErrBadResponse", err)
	}
}

func TestBasePathEnforced(t *testing.T) {
	reg := newRegistry(t, getter.Map(map[string]string{"k": "v"}))
	srv := httptest.NewServer(mustHandler(t, reg, &handlerOptions{BasePath: "/cache"}))
	defer srv.Close()
	for path, want := range map[string]int{
		"/cache/_geecache/scores/k":  http.StatusOK,
		"/_geecache/scores/k":        http.StatusBadRequest, // outside the base path
		"/cachex/_geecache/scores/k": http.StatusBadRequest,
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if st, body := rawGet(t, req); st != want {
			t.Errorf("GET %s = %d %q; want %d", path, st, body, want)
		}
	}
}

func TestSizeLimitOverHTTP(t *testing.T) {
	reg := newRegistry(t, getter.Map(map[string]string{"big": strings.Repeat("x", 1000)}))
	lenient := httptest.NewServer(mustHandler(t, reg, nil))
	defer lenient.Close()
	strict := httptest.NewServer(mustHandler(t, reg, &handlerOptions{MaxValueBytes: 999}))
	defer strict.Close()
	for name, c := range map[string]*Client{
		"client limit": mustClient(t, lenient.URL, &ClientOptions{MaxValueBytes: 999}),
		"server limit": mustClient(t, strict.URL, nil),
	} {
		_, _, err := peerGet(context.Background(), c, "scores", "big")
		c.CloseIdleConnections()
		if !errors.Is(err, protocol.ErrTooLarge) {
			t.Errorf("%s: err = %v; want ErrTooLarge", name, err)
		}
	}
}

func TestClientTimeout(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(1)
	reg := newRegistry(t, getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		started.Done()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return []byte("late"), nil
		}
	}))
	srv := httptest.NewServer(mustHandler(t, reg, nil))
	defer srv.Close()
	defer close(release)

	// The caller's context ends the request.
	c := mustClient(t, srv.URL, nil)
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { started.Wait(); cancel() }()
	if _, _, err := peerGet(ctx, c, "scores", "slow"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Get: err = %v; want context.Canceled", err)
	}
}

func TestPerRequestTimeout(t *testing.T) {
	reg := newRegistry(t, getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		<-ctx.Done() // never answers before the caller gives up
		return nil, ctx.Err()
	}))
	srv := httptest.NewServer(mustHandler(t, reg, nil))
	defer srv.Close()
	c := mustClient(t, srv.URL, &ClientOptions{Timeout: 20 * time.Millisecond}) // 20ms
	defer c.CloseIdleConnections()
	if _, _, err := peerGet(context.Background(), c, "scores", "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want context.DeadlineExceeded", err)
	}
}

// Concurrent requests reuse keep-alive connections instead of opening one
// per request (net/http's default keeps only 2 idle connections per host).
func TestConnectionReuse(t *testing.T) {
	reg := newRegistry(t, getter.Func(func(_ context.Context, key string) ([]byte, error) { return []byte(key), nil }))
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(mustHandler(t, reg, nil))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := mustClient(t, srv.URL, nil)
	defer c.CloseIdleConnections()
	const workers, each = 32, 40
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, _, err := peerGet(context.Background(), c, "scores", string(rune('a'+w))+string(rune('a'+i))); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d requests failed", failed.Load())
	}
	if n := conns.Load(); n > 2*workers {
		t.Fatalf("%d connections for %d requests from %d workers; want at most %d", n, workers*each, workers, 2*workers)
	}
}
