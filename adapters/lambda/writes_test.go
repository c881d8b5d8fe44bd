//go:build !js

package lambda

import (
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// writeNode is a one-node Lambda cluster without a secret, configured from
// env on top of its name and peer list, with the demo's scores group.
func writeNode(t *testing.T, env map[string]string) *Node {
	t.Helper()
	vars := map[string]string{envSelfURL: "node-a", envPeers: "node-a"}
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
	res, _, _ := invoke(t, n.h, urlEvent(t, method, req.Path, req.Header, base64.StdEncoding.EncodeToString(req.Body), true))
	return res.StatusCode
}

// TestLambdaNodeRefusesUnsignedWritesByDefault: a Lambda node without a
// secret refuses unsigned PUT and DELETE (and keeps serving what its source
// says, for a present and a missing key) unless GEECACHE_UNSIGNED_WRITES
// asks for them; then they are taken.
func TestLambdaNodeRefusesUnsignedWritesByDefault(t *testing.T) {
	for _, env := range []map[string]string{nil, {envUnsignedWrites: "false"}} {
		n := writeNode(t, env)
		for _, key := range []string{"Tom", "kkk"} {
			if code := outsiderWrite(t, n, http.MethodPut, key, "poison"); code != http.StatusUnauthorized {
				t.Errorf("%v: unsigned PUT of %s: %d, want 401", env, key, code)
			}
			if code := outsiderWrite(t, n, http.MethodDelete, key, ""); code != http.StatusUnauthorized {
				t.Errorf("%v: unsigned DELETE of %s: %d, want 401", env, key, code)
			}
		}
		if res, body := get(t, n.h, "scores", "Tom"); res.StatusCode != 200 || string(body) != "630" {
			t.Errorf("%v: Tom after refused writes: %d %q, want 630", env, res.StatusCode, body)
		}
		if res, body := get(t, n.h, "scores", "kkk"); res.StatusCode != 404 {
			t.Errorf("%v: kkk after refused writes: %d %q, want 404", env, res.StatusCode, body)
		}
	}

	n := writeNode(t, map[string]string{envUnsignedWrites: "true"})
	if !n.Config.UnsignedWrites {
		t.Fatalf("%s=true: Config.UnsignedWrites is false", envUnsignedWrites)
	}
	for _, key := range []string{"Tom", "kkk"} {
		if code := outsiderWrite(t, n, http.MethodPut, key, "set"); code != http.StatusOK {
			t.Fatalf("PUT of %s with unsigned writes on: %d, want 200", key, code)
		}
		if res, body := get(t, n.h, "scores", key); res.StatusCode != 200 || string(body) != "set" {
			t.Fatalf("%s after the PUT: %d %q, want set", key, res.StatusCode, body)
		}
		if code := outsiderWrite(t, n, http.MethodDelete, key, ""); code != http.StatusOK {
			t.Fatalf("DELETE of %s with unsigned writes on: %d, want 200", key, code)
		}
	}
	if res, body := get(t, n.h, "scores", "Tom"); res.StatusCode != 200 || string(body) != "630" {
		t.Errorf("Tom after the DELETE: %d %q, want 630 from the source", res.StatusCode, body)
	}
	if res, _ := get(t, n.h, "scores", "kkk"); res.StatusCode != 404 {
		t.Errorf("kkk after the DELETE: %d, want 404", res.StatusCode)
	}
}

// Unsigned writes are asked for in the Config only: the variable takes a
// boolean.
func TestUnsignedWritesSetting(t *testing.T) {
	_, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: "a", envPeers: "a", envUnsignedWrites: "yes"}))
	if !errors.Is(err, cache.ErrConfig) || !strings.Contains(err.Error(), envUnsignedWrites) {
		t.Errorf("%s=yes: %v, want cache.ErrConfig naming the variable", envUnsignedWrites, err)
	}
}

// ConfigFromEnv refuses an invoke mode or URL auth it does not know,
// instead of running buffered and unsigned; unset is the default of each.
func TestConfigRefusesUnknownModeAndAuth(t *testing.T) {
	for name, v := range map[string]string{envInvokeMode: "SOMETIMES", envURLAuth: "IAM"} {
		_, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: "a", envPeers: "a", name: v}))
		if !errors.Is(err, cache.ErrConfig) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v, want cache.ErrConfig naming the variable", name, v, err)
		}
	}
	c, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: "a", envPeers: "a"}))
	if err != nil || c.Stream || c.URLAuthIAM {
		t.Fatalf("defaults: %v, stream %v, IAM %v", err, c.Stream, c.URLAuthIAM)
	}
	c, err = ConfigFromEnv(lookupMap(map[string]string{envSelfURL: "a", envPeers: "a", envInvokeMode: "response_stream", envURLAuth: "aws_iam"}))
	if err != nil || !c.Stream || !c.URLAuthIAM {
		t.Fatalf("set: %v, stream %v, IAM %v", err, c.Stream, c.URLAuthIAM)
	}
}
