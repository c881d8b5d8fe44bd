//go:build !js

// Package configtest checks, across every package of the module, that a
// constructor given options that cannot work returns an error wrapping the
// one configuration sentinel, cache.ErrConfig, so that a caller tests for
// bad configuration the same way whatever it built. It lives under
// adapters/internal so that it can reach every package, the internal
// protocol included.
package configtest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/adapters/lambda/lambdatest"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// Every constructor's error for a setting that cannot work is
// errors.Is(err, cache.ErrConfig), and says "geecache: " once.
func TestEveryConstructorWrapsErrConfig(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	db := getter.Func(func(context.Context, string) ([]byte, error) { return nil, nil })
	pool, err := nethttp.NewPool("http://127.0.0.1:1", cache.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	cases := []struct {
		name string
		call func() error
	}{
		{"cache.Registry.NewGroup empty name", func() error {
			_, err := cache.NewRegistry().NewGroup("", 0, db, nil)
			return err
		}},
		{"cache.Registry.NewGroup negative PeerPolicy", func() error {
			_, err := cache.NewRegistry().NewGroup("g", 0, db, &cache.GroupOptions{PeerPolicy: cache.PeerPolicy{EjectAfter: -1}})
			return err
		}},
		{"picker.NewPeers negative Replicas", func() error {
			_, err := picker.NewPeers("", func(string) cache.Peer { return nil }, &picker.Options{Replicas: -1})
			return err
		}},
		{"protocol.NewServer negative MaxValueBytes", func() error {
			_, err := protocol.NewServer(cache.NewRegistry(), &protocol.ServerOptions{MaxValueBytes: -1})
			return err
		}},
		{"protocol.NewClient negative MaxValueBytes", func() error {
			_, err := protocol.NewClient(&protocol.ClientOptions{MaxValueBytes: -1})
			return err
		}},
		{"nethttp.NewClient without scheme", func() error {
			_, err := nethttp.NewClient("localhost:8001", nil)
			return err
		}},
		{"nethttp.NewPool without scheme", func() error {
			_, err := nethttp.NewPool("localhost:8001", cache.NewRegistry(), nil)
			return err
		}},
		{"nethttp.NewPool relative BasePath", func() error {
			_, err := nethttp.NewPool("http://127.0.0.1:1", cache.NewRegistry(), &nethttp.PoolOptions{Cluster: nethttp.Cluster{BasePath: "cache"}})
			return err
		}},
		{"nethttp.Pool.Set without scheme", func() error { return pool.Set("localhost:8001") }},
		{"lambda.ConfigFromEnv bad peer URL", func() error {
			env := map[string]string{"GEECACHE_SELF_URL": "self", "GEECACHE_PEERS": "self,http://"}
			_, err := lambda.ConfigFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			return err
		}},
		{"lambda.ConfigFromEnv nothing set", func() error {
			_, err := lambda.ConfigFromEnv(func(string) (string, bool) { return "", false })
			return err
		}},
		{"lambda.NewPeers bad name", func() error {
			_, err := lambda.NewPeers("not a name", nil)
			return err
		}},
		{"lambda.NewSigV4Transport no region", func() error {
			_, err := lambda.NewSigV4Transport(nil) // AWS_REGION is cleared above
			return err
		}},
		{"lambdatest.NewFront no endpoint", func() error {
			_, err := lambdatest.NewFront(nil, nil)
			return err
		}},
		{"lambdatest.NewFront negative InvokeTimeout", func() error {
			_, err := lambdatest.NewFront([]string{"http://127.0.0.1:1/2015-03-31/functions/function/invocations"}, &lambdatest.FrontOptions{InvokeTimeout: -1})
			return err
		}},
		{"lambdatest.NewFront endpoint not a URL", func() error {
			_, err := lambdatest.NewFront([]string{"127.0.0.1:1"}, nil)
			return err
		}},
		{"protocol.NewServer Secret without Self", func() error {
			_, err := protocol.NewServer(cache.NewRegistry(), &protocol.ServerOptions{Secret: []byte("k")})
			return err
		}},
		{"lambda.NewNode nil Setup", func() error {
			_, err := lambda.NewNode(lambda.Config{SelfURL: "self", Peers: []string{"self"}}, nil, nil)
			return err
		}},
	}
	// What some errors must say, beside the sentinel: a bad URL in the
	// environment is named by NormalizeURL's reason and the variable.
	says := map[string]string{
		"lambda.ConfigFromEnv bad peer URL": `peer URL "http://" has no host, in GEECACHE_PEERS`,
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if !errors.Is(err, cache.ErrConfig) {
				t.Fatalf("err = %v, want one wrapping cache.ErrConfig", err)
			}
			if want := says[c.name]; !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to say %q", err, want)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "geecache: ") || strings.Count(line, "geecache: ") != 1 {
					t.Errorf("error line %q does not start with exactly one \"geecache: \"", line)
				}
			}
		})
	}
}
