//go:build !js

package nethttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/getter"
)

// A browser page's GetMany is a POST of a batch whose headers are not
// CORS-safelisted, so the browser sends a preflight listing them first:
// the preflight of an allowed origin is answered 204 with every header the
// batch request really carries (X-Geecache-Peer, X-Geecache-Checksum and
// its Content-Type) allowed, or the browser never sends the batch. The
// headers are taken from a batch a Client sends, not listed by hand.
func TestCORSPreflightAllowsTheBatchHeaders(t *testing.T) {
	const app = "https://app.example.com"
	reg := newRegistry(t, getter.Map(map[string]string{"Tom": "630", "Sam": "567"}))
	h := mustHandler(t, reg, &handlerOptions{AllowOrigins: []string{app}})
	var (
		mu   sync.Mutex
		sent http.Header // the batch request's headers
		path string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			sent, path = r.Header.Clone(), r.URL.EscapedPath()
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys := []string{"Tom", "Sam"}
	got := make([]string, len(keys))
	if err := peerBatch(ctx, c, "scores", keys, false, func(i int, v []byte, _ time.Duration, err error) {
		if err == nil {
			got[i] = string(v)
		}
	}); err != nil || got[0] != "630" || got[1] != "567" {
		t.Fatalf("Batch = %q, %v; want [630 567]", got, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if sent == nil {
		t.Fatal("the batch was not a POST")
	}
	// What a browser's fetch() would list: every header the request sets,
	// less those the browser sets itself (net/http sets them here).
	var names []string
	for k := range sent {
		switch k {
		case "User-Agent", "Accept-Encoding", "Content-Length":
		default:
			names = append(names, strings.ToLower(k))
		}
	}
	slices.Sort(names)
	for _, must := range []string{"x-geecache-peer", "x-geecache-checksum", "content-type"} {
		if !slices.Contains(names, must) {
			t.Fatalf("the batch request carries %v; want %s among them", names, must)
		}
	}

	pre, err := http.NewRequestWithContext(ctx, http.MethodOptions, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	pre.Header.Set("Origin", app)
	pre.Header.Set("Access-Control-Request-Method", http.MethodPost)
	pre.Header.Set("Access-Control-Request-Headers", strings.Join(names, ","))
	res, err := srv.Client().Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != app {
		t.Fatalf("preflight of the batch: %d %v; want 204 for %s", res.StatusCode, res.Header, app)
	}
	var allowed []string
	for v := range strings.SplitSeq(res.Header.Get("Access-Control-Allow-Headers"), ",") {
		allowed = append(allowed, strings.ToLower(strings.TrimSpace(v)))
	}
	for _, n := range names {
		if !slices.Contains(allowed, n) {
			t.Errorf("preflight of the batch: Access-Control-Allow-Headers %v lacks %s, which the batch sends", allowed, n)
		}
	}
}
