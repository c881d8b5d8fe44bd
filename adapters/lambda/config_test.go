package lambda

import (
	"errors"
	"slices"
	"strings"
	"testing"
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
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want ErrConfig", err)
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}
