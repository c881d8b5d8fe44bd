//go:build !js

package lambda

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// sampleEvent returns one of aws-lambda-go's own sample events (its
// events/testdata), read from the module the build uses, with rawPath and
// http.path set to path, a GET without body, and the peer header. It
// skips the test if the module's directory cannot be found.
func sampleEvent(t *testing.T, file, path string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-lambda-go").Output()
	if err != nil || strings.TrimSpace(string(dir)) == "" {
		t.Skipf("aws-lambda-go's sample events not found: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "events", "testdata", file))
	if err != nil {
		t.Skipf("aws-lambda-go's sample events not found: %v", err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	ev["rawPath"] = path
	ev["body"], ev["isBase64Encoded"] = "", false
	ev["headers"] = map[string]string{"x-geecache-peer": "1"}
	rc := ev["requestContext"].(map[string]any)
	h := rc["http"].(map[string]any)
	h["method"], h["path"] = "GET", path
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// echoHandler serves group "g", whose value for every key is the key
// itself, so a response shows exactly which key was served.
func echoHandler(t *testing.T, base string) *handler {
	t.Helper()
	reg := cache.NewRegistry()
	echo := getter.Func(func(_ context.Context, key string) ([]byte, error) { return []byte("key=" + key), nil })
	if _, err := reg.NewGroup("g", 1<<20, echo, nil); err != nil {
		t.Fatal(err)
	}
	srv, err := protocol.NewServer(reg, &protocol.ServerOptions{MaxValueBytes: maxValueBytes})
	if err != nil {
		t.Fatal(err)
	}
	h, err := newHandler(srv, base)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestEventKinds: the same keys through a Function URL event (rawPath
// escaped) and an API Gateway HTTP API event (rawPath decoded once), both
// aws-lambda-go's samples, with and without a stage prefix: every key is
// served as itself, never as another key.
func TestEventKinds(t *testing.T) {
	const furl, apigw = "lambda-urls-request.json", "apigw-v2-request-no-authorizer.json"
	keys := []string{"Tom", "a/b", "a%2Fb", "100%", "sp ace", "?q#f", "ключ", "..", "", "a//b/"}
	for _, base := range []string{"", "/prod"} {
		h := echoHandler(t, base)
		for _, key := range keys {
			escaped := protocol.Path("g", key)
			decoded := protocol.Prefix + "g/" + key // as API Gateway delivers it
			for file, path := range map[string]string{furl: base + escaped, apigw: base + decoded} {
				res, body, _ := invoke(t, h, sampleEvent(t, file, path))
				if res.StatusCode != 200 || string(body) != "key="+key {
					t.Errorf("base %q, %s, key %q (path %q): %d %q", base, file, key, path, res.StatusCode, body)
				}
			}
		}
		// Peers' Invoke events carry no base path: served as well.
		if res, body, _ := invoke(t, h, sampleEvent(t, furl, protocol.Path("g", "a/b"))); res.StatusCode != 200 || string(body) != "key=a/b" {
			t.Errorf("base %q, no prefix: %d %q", base, res.StatusCode, body)
		}
	}
	h := echoHandler(t, "")
	for _, path := range []string{"/_geecache/g", "/other/g/k", "/_geecache//k"} {
		res, body, _ := invoke(t, h, sampleEvent(t, apigw, path))
		if res.StatusCode != 400 || !strings.Contains(string(body), "API Gateway event") {
			t.Errorf("API Gateway path %q: %d %q, want 400 saying why", path, res.StatusCode, body)
		}
	}
}

func TestHandlerBasePathErrors(t *testing.T) {
	for _, base := range []string{"prod", "/prod/", "/p?x"} {
		cfg := Config{SelfURL: "a", Peers: []string{"a"}, Cluster: nethttp.Cluster{BasePath: base}}
		setup := func(Config, *cache.Registry, cache.PeerPicker) error { return nil }
		if _, err := NewNode(cfg, setup, &Options{Logger: slog.New(slog.DiscardHandler)}); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("BasePath %q: %v, want cache.ErrConfig", base, err)
		}
	}
	if _, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: "a", envPeers: "a", envBasePath: "prod"})); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("GEECACHE_BASE_PATH=prod: %v, want cache.ErrConfig", err)
	}
}

// The dot keys in the protocol's form ("!./", "!../") through a Function
// URL event, and in the older "%2E" form; through an API Gateway event
// (decoded) a client's "!./" cannot be told from the key "!./" sent as
// "%21.%2F", so either spelling is refused (400: the caller loads the key
// itself) rather than served as the wrong key, while a decoded "." and
// ".." (older clients' "%2E", "%2E%2E") are served.
func TestEventDotKeys(t *testing.T) {
	const furl, apigw = "lambda-urls-request.json", "apigw-v2-request-no-authorizer.json"
	h := echoHandler(t, "")
	for _, tc := range []struct{ file, path, key string }{
		{furl, "/_geecache/g/!./", "."},
		{furl, "/_geecache/g/!../", ".."},
		{furl, "/_geecache/g/%2E", "."},
		{furl, "/_geecache/g/%2E%2E", ".."},
		{furl, "/_geecache/g/%21./", ""}, // not the marker: a malformed path
		{apigw, "/_geecache/g/.", "."},
		{apigw, "/_geecache/g/..", ".."},
		{apigw, "/_geecache/g/!.x", "!.x"},
		{apigw, "/_geecache/g/!./", ""},
		{apigw, "/_geecache/g/!../", ""},
		{apigw, "/_geecache/g/!.", ""},
		{apigw, "/_geecache/g/!..", ""},
		{apigw, "/_geecache/!./k", ""},
	} {
		res, body, _ := invoke(t, h, sampleEvent(t, tc.file, tc.path))
		if tc.key == "" {
			if res.StatusCode != 400 {
				t.Errorf("%s %q: %d %q; want 400", tc.file, tc.path, res.StatusCode, body)
			}
			continue
		}
		if res.StatusCode != 200 || string(body) != "key="+tc.key {
			t.Errorf("%s %q: %d %q; want 200 key=%s", tc.file, tc.path, res.StatusCode, body, tc.key)
		}
	}
}
