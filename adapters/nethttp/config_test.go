//go:build !js

package nethttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/keytest"
)

func TestPoolRefusesBadConfiguration(t *testing.T) {
	reg := cache.NewRegistry()
	p, err := NewPool("http://127.0.0.1:8001/", reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Set("localhost:8001"); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("Set(localhost:8001) err = %v; want ErrConfig", err)
	}
	// The same node written two ways is one node.
	if err := p.Set("http://127.0.0.1:8001", "HTTP://127.0.0.1:8002/", "http://127.0.0.1:8002"); err != nil {
		t.Fatal(err)
	}
	if got := p.Addrs(); len(got) != 2 || got[0] != "http://127.0.0.1:8001" || got[1] != "http://127.0.0.1:8002" {
		t.Fatalf("Addrs = %v; want the two nodes, normalised", got)
	}
	for name, o := range map[string]*PoolOptions{
		"negative timeout": {Timeout: -1},
		"bad base path":    {Cluster: Cluster{BasePath: "cache/"}},
		"negative size":    {Cluster: Cluster{MaxValueBytes: -1}},
		"negative skew":    {MaxSkew: -1},
		"negative ring":    {Cluster: Cluster{Replicas: -1}},
	} {
		if _, err := NewPool("http://h:1", reg, o); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("%s: NewPool err = %v; want ErrConfig", name, err)
		}
	}
	// The ring's error has one prefix.
	if _, err := NewPool("http://h:1", reg, &PoolOptions{Cluster: Cluster{Replicas: -1}}); !errors.Is(err, cache.ErrConfig) ||
		strings.Count(err.Error(), "geecache: ") != 1 {
		t.Errorf("Replicas -1: NewPool err = %v; want ErrConfig, one prefix", err)
	}
	if _, err := NewPool("h:1", reg, nil); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("NewPool(h:1) err = %v; want ErrConfig", err)
	}
	if _, err := NewClient("h:1", nil); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("NewClient(h:1) err = %v; want ErrConfig", err)
	}
	if _, err := newHandler(nil, nil); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("newHandler(nil) err = %v; want ErrConfig", err)
	}
}

// Every key round-trips through the Handler mounted at the root, under a
// ServeMux with a base path, and behind http.StripPrefix: the value comes
// back, and nothing redirects (a redirect would make the caller load the
// key itself on every cold Get).
func TestRandomKeysRoundTripThroughRouters(t *testing.T) {
	echo := getter.Func(func(_ context.Context, key string) ([]byte, error) { return []byte("v=" + key), nil })
	reg := newRegistry(t, echo)
	mux := http.NewServeMux()
	mux.Handle("/cache/", mustHandler(t, reg, &handlerOptions{BasePath: "/cache"}))
	mux.Handle("/strip/", http.StripPrefix("/strip", mustHandler(t, reg, nil)))
	root := httptest.NewServer(mustHandler(t, reg, nil))
	defer root.Close()
	muxed := httptest.NewServer(mux)
	defer muxed.Close()
	clients := map[string]*Client{
		"root":         mustClient(t, root.URL, nil),
		"mux base":     mustClient(t, muxed.URL, &ClientOptions{BasePath: "/cache"}),
		"strip prefix": mustClient(t, muxed.URL+"/strip", nil),
	}
	r := rand.New(rand.NewPCG(7, 11))
	for i, key := range keytest.Keys(r, 300) {
		for name, c := range clients {
			v, _, err := peerGet(t.Context(), c, "scores", key)
			if err != nil || !bytes.Equal(v, []byte("v="+key)) {
				t.Fatalf("%s, key #%d %q: %q, %v", name, i, key, v, err)
			}
		}
	}
	for _, c := range clients {
		c.CloseIdleConnections()
	}
}

func TestRequestWithBodyIsRefusedUnread(t *testing.T) {
	reg := newRegistry(t, getter.Map(map[string]string{"Tom": "630"}))
	srv := httptest.NewServer(mustHandler(t, reg, nil))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/_geecache/scores/Tom", strings.NewReader(strings.Repeat("x", 1<<20)))
	req.ContentLength = 1 << 20
	st, msg := rawGet(t, req)
	if st != http.StatusBadRequest || !strings.Contains(msg, "no body") {
		t.Fatalf("request with a body: %d %q; want 400", st, msg)
	}
}

func TestStatsHandler(t *testing.T) {
	reg := newRegistry(t, getter.Map(map[string]string{"Tom": "630"}))
	if _, err := reg.Lookup("scores").Get(t.Context(), "Tom"); err != nil {
		t.Fatal(err)
	}
	_, _ = reg.Lookup("scores").Get(t.Context(), "Tom")
	srv := httptest.NewServer(StatsHandler(reg))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	st, body := rawGet(t, req)
	var got struct{ Groups map[string]cache.Stats }
	if err := json.Unmarshal([]byte(body), &got); st != 200 || err != nil {
		t.Fatalf("GET = %d %q, %v", st, body, err)
	}
	if s := got.Groups["scores"]; s.Gets != 2 || s.Hits != 1 || s.LocalLoads != 1 || s.Main.Items != 1 {
		t.Fatalf("stats = %+v", s)
	}
	req, _ = http.NewRequest("POST", srv.URL, nil)
	if st, _ := rawGet(t, req); st != http.StatusMethodNotAllowed {
		t.Fatalf("POST = %d, want 405", st)
	}
}

// A browser page of an allowed origin gets its preflight answered and can
// read the protocol's headers; another origin gets no CORS headers.
func TestCORS(t *testing.T) {
	reg := newRegistry(t, getter.Map(map[string]string{"Tom": "630"}))
	srv := httptest.NewServer(mustHandler(t, reg, &handlerOptions{AllowOrigins: []string{"https://app.example.com"}}))
	defer srv.Close()
	pre, _ := http.NewRequest(http.MethodOptions, srv.URL+"/_geecache/scores/Tom", nil)
	pre.Header.Set("Origin", "https://app.example.com")
	pre.Header.Set("Access-Control-Request-Method", "GET")
	pre.Header.Set("Access-Control-Request-Headers", "x-geecache-peer")
	res, err := http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "X-Geecache-Peer") {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}
	get, _ := http.NewRequest(http.MethodGet, srv.URL+"/_geecache/scores/Tom", nil)
	get.Header.Set("Origin", "https://app.example.com")
	res, err = http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "X-Geecache-Checksum") {
		t.Fatalf("GET from the allowed origin: %d %v", res.StatusCode, res.Header)
	}
	get.Header.Set("Origin", "https://evil.example.com")
	res, err = http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("another origin was allowed: %v", res.Header)
	}
	if _, err := newHandler(reg, &handlerOptions{AllowOrigins: []string{"https://app.example.com/path"}}); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("an origin with a path: err = %v; want ErrConfig", err)
	}
	http.DefaultClient.CloseIdleConnections()
}
