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
		EnvSelfURL:       "https://b.lambda-url.eu-west-1.on.aws/",
		EnvPeers:         " https://a.lambda-url.eu-west-1.on.aws, https://b.lambda-url.eu-west-1.on.aws/ ,http://127.0.0.1:8001",
		EnvSecret:        "k",
		EnvCacheBytes:    "1048576",
		EnvMaxValueBytes: "1000",
		EnvInvokeMode:    "response_stream",
	}))
	if err != nil {
		t.Fatal(err)
	}
	wantPeers := []string{"https://a.lambda-url.eu-west-1.on.aws", "https://b.lambda-url.eu-west-1.on.aws", "http://127.0.0.1:8001"}
	if c.SelfURL != "https://b.lambda-url.eu-west-1.on.aws" || !slices.Equal(c.Peers, wantPeers) ||
		string(c.Secret) != "k" || c.CacheBytes != 1<<20 || c.MaxValueBytes != 1000 || c.Mode != ModeStream {
		t.Fatalf("got %+v", c)
	}
}

func TestConfigDefaults(t *testing.T) {
	c, err := ConfigFromEnv(lookupMap(map[string]string{EnvSelfURL: "http://127.0.0.1:1", EnvPeers: "http://127.0.0.1:1"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Secret != nil || c.CacheBytes != DefaultCacheBytes || c.MaxValueBytes != MaxValueBytes || c.Mode != ModeBuffered {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	ok := map[string]string{EnvSelfURL: "http://127.0.0.1:1", EnvPeers: "http://127.0.0.1:1,http://127.0.0.1:2"}
	for _, tc := range []struct {
		name    string
		set     map[string]string
		mention []string
	}{
		{"nothing set", map[string]string{EnvSelfURL: "", EnvPeers: ""}, []string{EnvSelfURL, EnvPeers}},
		{"self not a URL", map[string]string{EnvSelfURL: "127.0.0.1:1"}, []string{EnvSelfURL}},
		{"self has a query", map[string]string{EnvSelfURL: "http://127.0.0.1:1?x=1"}, []string{EnvSelfURL}},
		{"self not among peers", map[string]string{EnvSelfURL: "http://127.0.0.1:3"}, []string{EnvPeers, "does not include"}},
		{"bad peer", map[string]string{EnvPeers: "http://127.0.0.1:1,ftp://x"}, []string{EnvPeers, "ftp://x"}},
		{"duplicate peer", map[string]string{EnvPeers: "http://127.0.0.1:1,http://127.0.0.1:1/"}, []string{EnvPeers, "twice"}},
		{"only commas", map[string]string{EnvPeers: ",,"}, []string{EnvPeers}},
		{"cache bytes", map[string]string{EnvCacheBytes: "64MB"}, []string{EnvCacheBytes, "64MB"}},
		{"negative cache", map[string]string{EnvCacheBytes: "-1"}, []string{EnvCacheBytes}},
		{"max value zero", map[string]string{EnvMaxValueBytes: "0"}, []string{EnvMaxValueBytes}},
		{"max value too big", map[string]string{EnvMaxValueBytes: "10000000"}, []string{EnvMaxValueBytes, "Lambda"}},
		{"mode", map[string]string{EnvInvokeMode: "STREAM"}, []string{EnvInvokeMode}},
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
		EnvPeers:                   "node-a,node-b,http://127.0.0.1:8001",
		EnvQualifier:               "live",
		EnvEndpoints:               "node-a=http://127.0.0.1:9001, node-b=http://127.0.0.1:9002",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SelfURL != "node-b" || c.Qualifier != "live" || len(c.Endpoints) != 2 || c.Endpoints["node-b"] != "http://127.0.0.1:9002" {
		t.Fatalf("got %+v", c)
	}
	for name, env := range map[string]map[string]string{
		"self not listed": {"AWS_LAMBDA_FUNCTION_NAME": "node-c", EnvPeers: "node-a"},
		"bad name":        {EnvSelfURL: "node-a", EnvPeers: "node-a,bad name"},
		"bad endpoint":    {EnvSelfURL: "node-a", EnvPeers: "node-a", EnvEndpoints: "node-a=127.0.0.1:9001"},
		"bad qualifier":   {EnvSelfURL: "node-a", EnvPeers: "node-a", EnvQualifier: "a:b"},
	} {
		if _, err := ConfigFromEnv(lookupMap(env)); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("%s: %v, want cache.ErrConfig", name, err)
		}
	}
}

// The value cap follows the invoke mode: 6 MiB of response (base64) when
// buffered, 200 MB raw when streamed.
func TestConfigValueCapByMode(t *testing.T) {
	base := map[string]string{EnvSelfURL: "a", EnvPeers: "a"}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := ConfigFromEnv(lookupMap(with(EnvInvokeMode, ModeStream)))
	if err != nil || c.MaxValueBytes != MaxStreamValueBytes {
		t.Fatalf("stream default: %d, %v", c.MaxValueBytes, err)
	}
	if c, err := ConfigFromEnv(lookupMap(with(EnvInvokeMode, ModeStream, EnvMaxValueBytes, "10000000"))); err != nil || c.MaxValueBytes != 10_000_000 {
		t.Fatalf("10 MB streamed: %d, %v", c.MaxValueBytes, err)
	}
	if _, err := ConfigFromEnv(lookupMap(with(EnvMaxValueBytes, "10000000"))); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("10 MB buffered: %v, want cache.ErrConfig", err)
	}
	n, err := NewNode(Config{SelfURL: "a", Peers: []string{"a"}, Mode: ModeStream}, func(Config, *cache.Registry, cache.PeerPicker) error { return nil },
		&Options{Invoke: InvokeOptions{Client: &fakeInvoke{}}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil || n.Config.MaxValueBytes != MaxStreamValueBytes {
		t.Fatalf("NewNode stream: %v", err)
	}
}
