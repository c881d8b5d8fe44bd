//go:build !js

package nethttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// The fields of Cluster and PoolOptions are each read: these tests give
// every field a value that changes what a Pool does, and watch the change.
// Requests are served in memory (Pool.ServeHTTP on a recorder), so that
// the clock can be a synctest bubble's.

// optionsPool returns a Pool at self serving a scores group whose source
// answers "v:"+key, and fails for "fail" with a detail in its error.
func optionsPool(t *testing.T, self string, o PoolOptions) *Pool {
	t.Helper()
	reg := cache.NewRegistry()
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if key == "fail" {
			return nil, errors.New("db detail xyz")
		}
		return []byte("v:" + key), nil
	})
	if _, err := reg.NewGroup("scores", 1<<20, src, &cache.GroupOptions{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	p, err := NewPool(self, reg, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// finalRecorder is a recorder that keeps the final status, not an
// interim one (a node's "102 Processing" while it loads).
type finalRecorder struct{ *httptest.ResponseRecorder }

func (w finalRecorder) WriteHeader(code int) {
	if code >= 200 {
		w.ResponseRecorder.WriteHeader(code)
	}
}

// serveMem serves r with h in memory.
func serveMem(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := finalRecorder{httptest.NewRecorder()}
	h.ServeHTTP(w, r)
	return w.ResponseRecorder
}

// do serves one request with h and returns the status and body.
func do(h http.Handler, r *http.Request) (int, string, http.Header) {
	w := serveMem(h, r)
	return w.Code, w.Body.String(), w.Result().Header
}

// peerGetRequest is an unsigned peer GET of key from the scores group.
func peerGetRequest(base, key string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "http://peer"+base+"/_geecache/scores/"+key, nil)
	r.Header.Set(protocol.HeaderPeer, "1")
	return r
}

// handlerTransport sends every request to a handler, in memory, and
// records the requests' paths and headers.
type handlerTransport struct {
	h       http.Handler
	mu      sync.Mutex
	paths   []string
	headers []http.Header
}

func (tr *handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tr.mu.Lock()
	tr.paths = append(tr.paths, r.URL.EscapedPath())
	tr.headers = append(tr.headers, r.Header.Clone())
	tr.mu.Unlock()
	return serveMem(tr.h, r).Result(), nil
}

// firstRemote returns the getter of the first key k0, k1, … that p's
// peer owns.
func firstRemote(t *testing.T, p *Pool) (string, cache.Peer) {
	t.Helper()
	for i := range 1000 {
		k := fmt.Sprintf("k%d", i)
		if g, ok := p.PickPeer(k); ok {
			return k, g
		}
	}
	t.Fatal("the peer owns none of 1000 keys")
	return "", nil
}

func TestClusterFieldsAreRead(t *testing.T) {
	t.Run("BasePath", func(t *testing.T) {
		peer := optionsPool(t, "http://peer", PoolOptions{Cluster: Cluster{BasePath: "/cache"}})
		if code, _, _ := do(peer, peerGetRequest("", "Tom")); code != http.StatusBadRequest {
			t.Errorf("request outside the base path: %d, want 400", code)
		}
		if code, body, _ := do(peer, peerGetRequest("/cache", "Tom")); code != http.StatusOK || body != "v:Tom" {
			t.Errorf("request under the base path: %d %q, want 200 v:Tom", code, body)
		}
		tr := &handlerTransport{h: peer}
		asker := optionsPool(t, "http://ask", PoolOptions{Cluster: Cluster{BasePath: "/cache"}, Transport: tr})
		mustSet(t, asker, "http://ask", "http://peer")
		key, g := firstRemote(t, asker)
		if v, _, err := peerGet(t.Context(), g, "scores", key); err != nil || string(v) != "v:"+key {
			t.Fatalf("Get through the peer: %q, %v", v, err)
		}
		if len(tr.paths) != 1 || !strings.HasPrefix(tr.paths[0], "/cache/_geecache/scores/") {
			t.Errorf("asked %q, want one path under /cache", tr.paths)
		}
	})
	t.Run("Secret", func(t *testing.T) {
		c := Cluster{Secret: []byte("k")}
		peer := optionsPool(t, "http://peer", PoolOptions{Cluster: c})
		if code, _, _ := do(peer, peerGetRequest("", "Tom")); code != http.StatusUnauthorized {
			t.Errorf("unsigned request to a node with a Secret: %d, want 401", code)
		}
		tr := &handlerTransport{h: peer}
		asker := optionsPool(t, "http://ask", PoolOptions{Cluster: c, Transport: tr})
		mustSet(t, asker, "http://ask", "http://peer")
		key, g := firstRemote(t, asker)
		if v, _, err := peerGet(t.Context(), g, "scores", key); err != nil || string(v) != "v:"+key {
			t.Fatalf("signed Get: %q, %v", v, err)
		}
		if tr.headers[0].Get(protocol.HeaderSignature) == "" {
			t.Error("the request to the peer is not signed")
		}
	})
	t.Run("MaxValueBytes", func(t *testing.T) {
		small := optionsPool(t, "http://peer", PoolOptions{Cluster: Cluster{MaxValueBytes: 3}})
		if code, _, _ := do(small, peerGetRequest("", "Tom")); code != http.StatusRequestEntityTooLarge {
			t.Errorf("5-byte value, MaxValueBytes 3: %d, want 413", code)
		}
		def := optionsPool(t, "http://peer", PoolOptions{})
		if code, _, _ := do(def, peerGetRequest("", "Tom")); code != http.StatusOK {
			t.Errorf("5-byte value, default MaxValueBytes: %d, want 200", code)
		}
	})
	t.Run("Replicas and Hash", func(t *testing.T) {
		nodes := []string{"http://a", "http://b", "http://c"}
		c := Cluster{Replicas: 3, Hash: picker.CRC32}
		pool := optionsPool(t, nodes[0], PoolOptions{Cluster: c})
		mustSet(t, pool, nodes...)
		quiet := slog.New(slog.DiscardHandler)
		same, _ := picker.NewPeers("", nil, &picker.Options{Replicas: 3, Hash: picker.CRC32, Logger: quiet})
		def, _ := picker.NewPeers("", nil, &picker.Options{Logger: quiet})
		for _, p := range []*picker.Peers{same, def} {
			if err := p.Set(nodes...); err != nil {
				t.Fatal(err)
			}
		}
		differs := 0
		for i := range 1000 {
			k := fmt.Sprintf("key-%d", i)
			if pool.Owner(k) != same.Owner(k) {
				t.Fatalf("key %q: the Pool says %s, a ring with its Replicas and Hash %s", k, pool.Owner(k), same.Owner(k))
			}
			if pool.Owner(k) != def.Owner(k) {
				differs++
			}
		}
		if differs == 0 {
			t.Error("the Pool places every key as the default ring does: Replicas and Hash not read")
		}
	})
}

// headerPropagator injects X-Test from the context value testKey and
// counts its Extracts.
type headerPropagator struct{ extracts *int }

type testKey struct{}

func (headerPropagator) Inject(ctx context.Context, h http.Header) {
	if v, ok := ctx.Value(testKey{}).(string); ok {
		h.Set("X-Test", v)
	}
}

func (p headerPropagator) Extract(ctx context.Context, h http.Header) context.Context {
	if h.Get("X-Test") != "" {
		*p.extracts++
	}
	return ctx
}

// blockingTransport answers only when the request's context ends.
type blockingTransport struct{}

func (blockingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
}

func TestPoolOptionsFieldsAreRead(t *testing.T) {
	t.Run("MaxSkew", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			c := Cluster{Secret: []byte("k")}
			lenient := optionsPool(t, "http://peer", PoolOptions{Cluster: c, MaxSkew: time.Minute})
			strict := optionsPool(t, "http://peer", PoolOptions{Cluster: c})
			signer, err := protocol.NewClient(&protocol.ClientOptions{Secret: c.Secret})
			if err != nil {
				t.Fatal(err)
			}
			req := signer.NewRequest(t.Context(), "http://peer", "scores", "Tom", false)
			time.Sleep(45 * time.Second)
			signed := func() *http.Request {
				r := httptest.NewRequest(http.MethodGet, "http://peer"+req.Path, nil)
				r.Header = req.Header.Clone()
				return r
			}
			if code, _, _ := do(strict, signed()); code != http.StatusUnauthorized {
				t.Errorf("default MaxSkew, request 45 s old: %d, want 401", code)
			}
			if code, body, _ := do(lenient, signed()); code != http.StatusOK || body != "v:Tom" {
				t.Errorf("MaxSkew 1 min, request 45 s old: %d %q, want 200 v:Tom", code, body)
			}
			time.Sleep(time.Second) // the loads' workers end when idle
		})
	})
	t.Run("HideErrors", func(t *testing.T) {
		for _, hide := range []bool{false, true} {
			p := optionsPool(t, "http://peer", PoolOptions{HideErrors: hide})
			_, body, _ := do(p, peerGetRequest("", "fail"))
			if strings.Contains(body, "db detail xyz") == hide {
				t.Errorf("HideErrors %v: the unsigned caller got %q", hide, body)
			}
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		for _, tc := range []struct{ timeout, want time.Duration }{{0, 10 * time.Second}, {2 * time.Second, 2 * time.Second}} {
			synctest.Test(t, func(t *testing.T) {
				p := optionsPool(t, "http://ask", PoolOptions{Timeout: tc.timeout, Transport: blockingTransport{}})
				mustSet(t, p, "http://ask", "http://peer")
				key, g := firstRemote(t, p)
				start := time.Now()
				_, _, err := peerGet(t.Context(), g, "scores", key)
				if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took != tc.want {
					t.Errorf("Timeout %v: %v after %v, want DeadlineExceeded after %v", tc.timeout, err, took, tc.want)
				}
			})
		}
	})
	t.Run("Propagator and Transport", func(t *testing.T) {
		extracts := 0
		prop := headerPropagator{extracts: &extracts}
		peer := optionsPool(t, "http://peer", PoolOptions{Propagator: prop})
		tr := &handlerTransport{h: peer}
		asker := optionsPool(t, "http://ask", PoolOptions{Propagator: prop, Transport: tr})
		mustSet(t, asker, "http://ask", "http://peer")
		key, g := firstRemote(t, asker)
		ctx := context.WithValue(t.Context(), testKey{}, "trace-1")
		if v, _, err := peerGet(ctx, g, "scores", key); err != nil || string(v) != "v:"+key {
			t.Fatalf("Get: %q, %v", v, err)
		}
		if len(tr.headers) != 1 || tr.headers[0].Get("X-Test") != "trace-1" {
			t.Errorf("the Transport saw %v, want one request carrying the injected header", tr.headers)
		}
		if extracts != 1 {
			t.Errorf("the serving Pool extracted %d times, want 1", extracts)
		}
	})
	t.Run("Logger", func(t *testing.T) {
		var buf bytes.Buffer
		debug := &slog.HandlerOptions{Level: slog.LevelDebug} // the changes of the peer list are Debug
		p := optionsPool(t, "http://a", PoolOptions{Logger: slog.New(slog.NewTextHandler(&buf, debug))})
		mustSet(t, p, "http://a", "http://b")
		if !strings.Contains(buf.String(), "peers set") || !strings.Contains(buf.String(), "http://b") {
			t.Errorf("Logger got %q, want the new peer list", buf.String())
		}
	})
	t.Run("AllowOrigins", func(t *testing.T) {
		for _, origins := range [][]string{nil, {"https://app.example.com"}} {
			p := optionsPool(t, "http://peer", PoolOptions{AllowOrigins: origins})
			r := httptest.NewRequest(http.MethodOptions, "http://peer/_geecache/scores/Tom", nil)
			r.Header.Set("Origin", "https://app.example.com")
			r.Header.Set("Access-Control-Request-Method", "GET")
			_, _, h := do(p, r)
			if got := h.Get("Access-Control-Allow-Origin"); (got != "") != (origins != nil) {
				t.Errorf("AllowOrigins %q: Access-Control-Allow-Origin %q", origins, got)
			}
		}
	})
	t.Run("UnsignedWrites", func(t *testing.T) {
		for _, tc := range []struct {
			unsigned bool
			want     int
		}{{false, http.StatusUnauthorized}, {true, http.StatusOK}} {
			p := optionsPool(t, "http://peer", PoolOptions{UnsignedWrites: tc.unsigned})
			r := httptest.NewRequest(http.MethodDelete, "http://peer/_geecache/scores/Tom", nil)
			r.Header.Set(protocol.HeaderPeer, "1")
			if code, body, _ := do(p, r); code != tc.want {
				t.Errorf("UnsignedWrites %v: unsigned DELETE %d %q, want %d", tc.unsigned, code, body, tc.want)
			}
		}
	})
}
