//go:build !js

package lambda

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	awslambda "github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsl "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/geecache/geecache/adapters/lambda/lambdatest"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// sdkClient is a real Lambda API client with static credentials, no
// retries, and a transport closed when the test ends. Tests point it at
// local runtimes with PeersOptions.Resolve or Config.Endpoints.
func sdkClient(t testing.TB) *awsl.Client {
	t.Helper()
	tr := nethttp.NewTransport()
	t.Cleanup(tr.CloseIdleConnections)
	return awsl.New(awsl.Options{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""),
		HTTPClient:  &http.Client{Transport: tr},
		Retryer:     aws.NopRetryer{},
	})
}

// loadCounter counts a node's source loads by key.
type loadCounter struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *loadCounter) getter() getter.Getter {
	src := getter.Map(seedScores)
	return getter.Func(func(ctx context.Context, key string) ([]byte, error) {
		c.mu.Lock()
		c.m[key]++
		c.mu.Unlock()
		return src.Get(ctx, key)
	})
}

func (c *loadCounter) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// invokeCluster starts n Lambda nodes named node-0.., each served by an
// in-process runtime (the JSON path of the real one) and reached by its
// peers through the SDK's Invoke call. It returns the nodes, their
// runtimes and their load counters.
func invokeCluster(t *testing.T, n int, stream bool) ([]*Node, []*httptest.Server, []*loadCounter) {
	t.Helper()
	return invokeClusterCounting(t, n, stream, nil, cache.PeerPolicy{})
}

// invokeClusterCounting is invokeCluster that counts in invokes (if not
// nil) every invoke of any node, with policy for each group.
func invokeClusterCounting(t *testing.T, n int, stream bool, invokes *atomic.Int64, policy cache.PeerPolicy) ([]*Node, []*httptest.Server, []*loadCounter) {
	t.Helper()
	var names []string
	nodes := make([]*Node, n)
	srvs := make([]*httptest.Server, n)
	eps := map[string]string{}
	for i := range n {
		name := "node-" + string(rune('a'+i))
		names = append(names, name)
		srvs[i], _ = lambdatest.NewRuntime(func(ctx context.Context, payload []byte) ([]byte, error) {
			if invokes != nil {
				invokes.Add(1)
			}
			if stream {
				return awslambda.NewHandler(nodes[i].h.ServeStream).Invoke(ctx, payload)
			}
			return awslambda.NewHandler(nodes[i].h.ServeURL).Invoke(ctx, payload)
		})
		t.Cleanup(srvs[i].Close)
		eps[name] = srvs[i].URL
	}
	api := sdkClient(t)
	loads := make([]*loadCounter, n)
	for i := range n {
		loads[i] = &loadCounter{m: map[string]int{}}
		cfg := Config{SelfURL: names[i], Peers: names, Endpoints: eps, CacheBytes: 1 << 20}
		setup := func(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error {
			_, err := reg.NewGroup("scores", cfg.CacheBytes, loads[i].getter(), &cache.GroupOptions{Peers: peers, PeerPolicy: policy})
			return err
		}
		var err error
		nodes[i], err = NewNode(cfg, setup, &Options{Logger: slog.New(slog.DiscardHandler), Peers: PeerOptions{Client: api}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nodes[i].Close)
	}
	return nodes, srvs, loads
}

// TestInvokeClusterInProcess: three nodes named by function reach each
// other through the SDK; each key is loaded by its owner only; with one
// node's runtime gone, the others load its keys themselves.
func TestInvokeClusterInProcess(t *testing.T) {
	for _, stream := range []bool{false, true} {
		nodes, srvs, loads := invokeCluster(t, 3, stream)
		for _, n := range nodes {
			for key, want := range seedScores {
				v, err := n.Registry.Lookup("scores").Get(t.Context(), key)
				if err != nil || v.String() != want {
					t.Fatalf("stream=%v %s: %s = %q, %v", stream, n.Config.SelfURL, key, v.String(), err)
				}
			}
		}
		for key := range seedScores {
			for i, n := range nodes {
				want := 0
				if n.Peers.Owner(key) == n.Config.SelfURL {
					want = 1
				}
				if got := loads[i].get(key); got != want {
					t.Errorf("stream=%v: %s loaded %s %d times, want %d", stream, n.Config.SelfURL, key, got, want)
				}
			}
		}
		if s := nodes[0].Registry.Lookup("scores").Stats(); s.PeerLoads == 0 || s.PeerErrors != 0 {
			t.Errorf("stream=%v: node-a stats %+v: want peer loads, no peer errors", stream, s)
		}

		// Tom's owner goes away: the keys it owns are loaded locally by
		// whoever is asked, after failed invokes of the owner and of the
		// next node.
		dead := nodes[0].Peers.Owner("Tom")
		checked := 0
		for i, n := range nodes {
			if n.Config.SelfURL == dead {
				srvs[i].Close()
			}
		}
		for key, want := range seedScores {
			if nodes[0].Peers.Owner(key) != dead {
				continue
			}
			for i, n := range nodes {
				if n.Config.SelfURL == dead {
					continue
				}
				checked++
				// A fresh group: the hot copy of earlier fetches must not answer.
				g, err := cache.NewRegistry().NewGroup("fresh", 1<<20, loads[i].getter(), &cache.GroupOptions{Peers: n.Peers})
				if err != nil {
					t.Fatal(err)
				}
				before := loads[i].get(key)
				if v, err := g.Get(t.Context(), key); err != nil || v.String() != want {
					t.Fatalf("stream=%v: without %s, %s: %s = %q, %v", stream, dead, n.Config.SelfURL, key, v.String(), err)
				}
				// The owner's invoke fails, then the next node's if it is
				// not this one (it has no group "fresh"): the key is loaded
				// here.
				if loads[i].get(key) != before+1 || g.Stats().FallbackLoads != 1 {
					t.Errorf("stream=%v: %s did not fall back for %s: %+v", stream, n.Config.SelfURL, key, g.Stats())
				}
			}
		}
		if checked < 2 {
			t.Fatalf("checked %d fallbacks", checked)
		}
	}
}
