//go:build !js

package lambda

import (
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
)

func lookupMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestConfigFromEnv(t *testing.T) {
	c, err := ConfigFromEnv(lookupMap(map[string]string{
		envSelfURL:       "https://b.lambda-url.eu-west-1.on.aws/",
		envPeers:         " https://a.lambda-url.eu-west-1.on.aws, https://b.lambda-url.eu-west-1.on.aws/ ,http://127.0.0.1:8001",
		envSecret:        "k",
		envCacheBytes:    "1048576",
		envMaxValueBytes: "1000",
		envInvokeMode:    "response_stream",
	}))
	if err != nil {
		t.Fatal(err)
	}
	wantPeers := []string{"https://a.lambda-url.eu-west-1.on.aws", "https://b.lambda-url.eu-west-1.on.aws", "http://127.0.0.1:8001"}
	if c.SelfURL != "https://b.lambda-url.eu-west-1.on.aws" || !slices.Equal(c.Peers, wantPeers) ||
		string(c.Cluster.Secret) != "k" || c.CacheBytes != 1<<20 || c.Cluster.MaxValueBytes != 1000 || !c.Stream {
		t.Fatalf("got %+v", c)
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: "http://127.0.0.1:1", envPeers: "http://127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster.Secret != nil || c.CacheBytes != defaultCacheBytes || c.Cluster.MaxValueBytes != maxValueBytes || c.Stream {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	ok := map[string]string{envSelfURL: "http://127.0.0.1:1", envPeers: "http://127.0.0.1:1,http://127.0.0.1:2"}
	for _, tc := range []struct {
		name    string
		set     map[string]string
		mention []string
	}{
		{"nothing set", map[string]string{envSelfURL: "", envPeers: ""}, []string{envSelfURL, envPeers}},
		{"self not a URL", map[string]string{envSelfURL: "127.0.0.1:1"}, []string{envSelfURL}},
		{"self has a query", map[string]string{envSelfURL: "http://127.0.0.1:1?x=1"}, []string{envSelfURL}},
		{"self not among peers", map[string]string{envSelfURL: "http://127.0.0.1:3"}, []string{envPeers, "does not include"}},
		{"bad peer", map[string]string{envPeers: "http://127.0.0.1:1,ftp://x"}, []string{envPeers, "ftp://x"}},
		{"duplicate peer", map[string]string{envPeers: "http://127.0.0.1:1,http://127.0.0.1:1/"}, []string{envPeers, "twice"}},
		{"only commas", map[string]string{envPeers: ",,"}, []string{envPeers}},
		{"cache bytes", map[string]string{envCacheBytes: "64MB"}, []string{envCacheBytes, "64MB"}},
		{"negative cache", map[string]string{envCacheBytes: "-1"}, []string{envCacheBytes}},
		{"max value zero", map[string]string{envMaxValueBytes: "0"}, []string{envMaxValueBytes}},
		{"max value too big", map[string]string{envMaxValueBytes: "10000000"}, []string{envMaxValueBytes, "Lambda"}},
		{"mode", map[string]string{envInvokeMode: "STREAM"}, []string{envInvokeMode}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range ok {
				env[k] = v
			}
			for k, v := range tc.set {
				env[k] = v
			}
			_, err := ConfigFromEnv(lookupMap(env))
			if !errors.Is(err, cache.ErrConfig) {
				t.Fatalf("err = %v, want cache.ErrConfig", err)
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

// Peers named by function: self defaults to the function's own name, and
// local endpoints and a qualifier are read.
func TestConfigFunctionNames(t *testing.T) {
	c, err := ConfigFromEnv(lookupMap(map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME": "node-b",
		envPeers:                   "node-a,node-b,http://127.0.0.1:8001",
		envQualifier:               "live",
		envEndpoints:               "node-a=http://127.0.0.1:9001, node-b=http://127.0.0.1:9002",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SelfURL != "node-b" || c.Qualifier != "live" || len(c.Endpoints) != 2 || c.Endpoints["node-b"] != "http://127.0.0.1:9002" {
		t.Fatalf("got %+v", c)
	}
	for name, env := range map[string]map[string]string{
		"self not listed": {"AWS_LAMBDA_FUNCTION_NAME": "node-c", envPeers: "node-a"},
		"bad name":        {envSelfURL: "node-a", envPeers: "node-a,bad name"},
		"bad endpoint":    {envSelfURL: "node-a", envPeers: "node-a", envEndpoints: "node-a=127.0.0.1:9001"},
		"bad qualifier":   {envSelfURL: "node-a", envPeers: "node-a", envQualifier: "a:b"},
		// A typo in a name would send that peer's invokes to the real
		// Lambda API instead of its emulator.
		"endpoint of no peer": {envSelfURL: "node-a", envPeers: "node-a,node-b", envEndpoints: "node-a=http://127.0.0.1:9001,nod-b=http://127.0.0.1:9002"},
	} {
		if _, err := ConfigFromEnv(lookupMap(env)); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("%s: %v, want cache.ErrConfig", name, err)
		}
	}
}

// The value cap follows the invoke mode: 6 MiB of response (base64) when
// buffered, 200 MB raw when streamed.
func TestConfigValueCapByMode(t *testing.T) {
	base := map[string]string{envSelfURL: "a", envPeers: "a"}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := ConfigFromEnv(lookupMap(with(envInvokeMode, modeStream)))
	if err != nil || c.Cluster.MaxValueBytes != maxStreamValueBytes {
		t.Fatalf("stream default: %d, %v", c.Cluster.MaxValueBytes, err)
	}
	if c, err := ConfigFromEnv(lookupMap(with(envInvokeMode, modeStream, envMaxValueBytes, "10000000"))); err != nil || c.Cluster.MaxValueBytes != 10_000_000 {
		t.Fatalf("10 MB streamed: %d, %v", c.Cluster.MaxValueBytes, err)
	}
	if _, err := ConfigFromEnv(lookupMap(with(envMaxValueBytes, "10000000"))); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("10 MB buffered: %v, want cache.ErrConfig", err)
	}
	n, err := NewNode(Config{SelfURL: "a", Peers: []string{"a"}, Stream: true}, func(Config, *cache.Registry, cache.PeerPicker) error { return nil },
		&Options{Peers: PeerOptions{Client: &fakeInvoke{}}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil || n.Config.Cluster.MaxValueBytes != maxStreamValueBytes {
		t.Fatalf("NewNode stream: %v", err)
	}
}
