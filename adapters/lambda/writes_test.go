package lambda

import (
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// writeNode is a one-node Lambda cluster without a secret, configured from
// env on top of its name and peer list, with the seed's scores group.
func writeNode(t *testing.T, env map[string]string) *Node {
	t.Helper()
	vars := map[string]string{EnvSelfURL: "node-a", EnvPeers: "node-a"}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := ConfigFromEnv(lookupMap(vars))
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewNode(cfg, func(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error {
		_, err := reg.NewGroup("scores", cfg.CacheBytes, getter.Map(seedScores), &cache.GroupOptions{Peers: peers})
		return err
	}, &Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// outsiderWrite sends a well-formed, unsigned peer write to the node's
// Handler as a Function URL event: what anyone who can reach the URL can
// send.
func outsiderWrite(t *testing.T, n *Node, method, key, value string) int {
	t.Helper()
	c := protoClient(t, nil)
	req := c.NewRemoveRequest(t.Context(), "", "scores", key)
	if method == http.MethodPut {
		req = c.NewSetRequest(t.Context(), "", "scores", key, []byte(value), 0)
	}
	res, _, _ := invoke(t, n.Handler, urlEvent(t, method, req.Path, req.Header, base64.StdEncoding.EncodeToString(req.Body), true))
	return res.StatusCode
}

// TestLambdaNodeRefusesUnsignedWritesByDefault: a Lambda node without a
// secret refuses unsigned PUT and DELETE (and keeps serving what its source
// says, for a present and a missing key) unless GEECACHE_UNSIGNED_WRITES
// asks for them; then they are taken.
func TestLambdaNodeRefusesUnsignedWritesByDefault(t *testing.T) {
	for _, env := range []map[string]string{nil, {EnvUnsignedWrites: "false"}} {
		n := writeNode(t, env)
		for _, key := range []string{"Tom", "kkk"} {
			if code := outsiderWrite(t, n, http.MethodPut, key, "poison"); code != http.StatusUnauthorized {
				t.Errorf("%v: unsigned PUT of %s: %d, want 401", env, key, code)
			}
			if code := outsiderWrite(t, n, http.MethodDelete, key, ""); code != http.StatusUnauthorized {
				t.Errorf("%v: unsigned DELETE of %s: %d, want 401", env, key, code)
			}
		}
		if res, body := get(t, n.Handler, "scores", "Tom"); res.StatusCode != 200 || string(body) != "630" {
			t.Errorf("%v: Tom after refused writes: %d %q, want 630", env, res.StatusCode, body)
		}
		if res, body := get(t, n.Handler, "scores", "kkk"); res.StatusCode != 404 {
			t.Errorf("%v: kkk after refused writes: %d %q, want 404", env, res.StatusCode, body)
		}
	}

	n := writeNode(t, map[string]string{EnvUnsignedWrites: "true"})
	if !n.Config.UnsignedWrites {
		t.Fatalf("%s=true: Config.UnsignedWrites is false", EnvUnsignedWrites)
	}
	for _, key := range []string{"Tom", "kkk"} {
		if code := outsiderWrite(t, n, http.MethodPut, key, "set"); code != http.StatusOK {
			t.Fatalf("PUT of %s with unsigned writes on: %d, want 200", key, code)
		}
		if res, body := get(t, n.Handler, "scores", key); res.StatusCode != 200 || string(body) != "set" {
			t.Fatalf("%s after the PUT: %d %q, want set", key, res.StatusCode, body)
		}
		if code := outsiderWrite(t, n, http.MethodDelete, key, ""); code != http.StatusOK {
			t.Fatalf("DELETE of %s with unsigned writes on: %d, want 200", key, code)
		}
	}
	if res, body := get(t, n.Handler, "scores", "Tom"); res.StatusCode != 200 || string(body) != "630" {
		t.Errorf("Tom after the DELETE: %d %q, want 630 from the source", res.StatusCode, body)
	}
	if res, _ := get(t, n.Handler, "scores", "kkk"); res.StatusCode != 404 {
		t.Errorf("kkk after the DELETE: %d, want 404", res.StatusCode)
	}
}

// Unsigned writes are asked for in the Config only: the variable takes a
// boolean, and Options.Peers.UnsignedWrites (which NewNode never read) is
// refused rather than ignored.
func TestUnsignedWritesSetting(t *testing.T) {
	_, err := ConfigFromEnv(lookupMap(map[string]string{EnvSelfURL: "a", EnvPeers: "a", EnvUnsignedWrites: "yes"}))
	if !errors.Is(err, cache.ErrConfig) || !strings.Contains(err.Error(), EnvUnsignedWrites) {
		t.Errorf("%s=yes: %v, want cache.ErrConfig naming the variable", EnvUnsignedWrites, err)
	}
	ok := func(Config, *cache.Registry, cache.PeerPicker) error { return nil }
	_, err = NewNode(Config{SelfURL: "a", Peers: []string{"a"}}, ok,
		&Options{Peers: nethttp.PoolOptions{UnsignedWrites: true}, Logger: slog.New(slog.DiscardHandler)})
	if !errors.Is(err, cache.ErrConfig) || !strings.Contains(err.Error(), "UnsignedWrites") {
		t.Errorf("Options.Peers.UnsignedWrites: %v, want cache.ErrConfig", err)
	}
}

// NewNode refuses a Mode or URLAuth it does not know, instead of running
// buffered and unsigned; "" is the default of each.
func TestNewNodeRefusesUnknownModeAndAuth(t *testing.T) {
	ok := func(Config, *cache.Registry, cache.PeerPicker) error { return nil }
	quiet := &Options{Logger: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		cfg     Config
		mention string
	}{
		{Config{Mode: "SOMETIMES"}, "Config.Mode"},
		{Config{Mode: "buffered"}, "Config.Mode"},
		{Config{URLAuth: "IAM"}, "Config.URLAuth"},
	} {
		tc.cfg.SelfURL, tc.cfg.Peers = "a", []string{"a"}
		if _, err := NewNode(tc.cfg, ok, quiet); !errors.Is(err, cache.ErrConfig) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%+v: %v, want cache.ErrConfig naming %s", tc.cfg, err, tc.mention)
		}
	}
	n, err := NewNode(Config{SelfURL: "a", Peers: []string{"a"}}, ok, quiet)
	if err != nil || n.Config.Mode != ModeBuffered || n.Config.URLAuth != AuthNone {
		t.Fatalf("defaults: %v, mode %q, auth %q", err, n.Config.Mode, n.Config.URLAuth)
	}
	if _, err := ConfigFromEnv(lookupMap(map[string]string{EnvSelfURL: "a", EnvPeers: "a", EnvInvokeMode: "SOMETIMES"})); !errors.Is(err, cache.ErrConfig) ||
		!strings.Contains(err.Error(), EnvInvokeMode) {
		t.Errorf("%s=SOMETIMES: %v, want cache.ErrConfig naming the variable", EnvInvokeMode, err)
	}
}
