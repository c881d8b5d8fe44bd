//go:build !js

package lambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Over the Invoke API (buffered and streamed answers): GetMany sends one
// invoke per other owner and gets every score, and "not found" for the
// missing key alone; RemoveMany and Purge reach every node with one invoke
// each.
func TestBatchOverInvoke(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			var invokes atomic.Int64
			// No hedge: the Invoke API cannot say "loading", and under load
			// a hedge would load a key a second time, which the test counts.
			nodes, _, loads := invokeClusterCounting(t, 3, stream, &invokes, cache.PeerPolicy{NoHedge: true})
			keys := []string{"Tom", "kkk", "Jack", "Sam"}
			owners := map[string]bool{}
			for _, k := range keys {
				if o := nodes[0].Peers.Owner(k); o != nodes[0].Config.SelfURL {
					owners[o] = true
				}
			}
			g := nodes[0].Registry.Lookup("scores")
			check := func() {
				t.Helper()
				g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
					want, ok := seedScores[keys[i]]
					switch {
					case !ok:
						if !errors.Is(err, getter.ErrNotFound) {
							t.Errorf("%s: %q, %v; want not found", keys[i], v, err)
						}
					case err != nil || v.String() != want:
						t.Errorf("%s: %q, %v; want %s", keys[i], v, err, want)
					}
				})
			}
			check()
			if n := invokes.Load(); n != int64(len(owners)) {
				t.Fatalf("GetMany made %d invokes; want %d, one per other owner", n, len(owners))
			}
			for k := range seedScores {
				total := 0
				for _, l := range loads {
					total += l.get(k)
				}
				if total != 1 {
					t.Errorf("%s loaded %d times in the cluster, want 1", k, total)
				}
			}
			invokes.Store(0)
			// Without a secret the peers refuse a write: each is told once,
			// and named.
			var ue *cache.UpdateError
			if err := g.Purge(t.Context()); !errors.As(err, &ue) || len(ue.Failed) != 2 {
				t.Fatalf("an unsigned Purge = %v; want both peers named", err)
			}
			if n := invokes.Load(); n != 2 {
				t.Fatalf("Purge made %d invokes; want 2, one per peer", n)
			}
		})
	}
}

// Behind Function URLs (a front that turns HTTP into the URL event), with
// a secret: GetMany sends one signed batch to the other node and gets
// every score; a signed Purge empties both nodes, one request to the peer.
func TestBatchOverFunctionURLs(t *testing.T) {
	lns := [2]net.Listener{}
	var urls []string
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ln
		urls = append(urls, "http://"+ln.Addr().String())
	}
	var invokes atomic.Int64
	nodes := make([]*Node, 2)
	for i := range nodes {
		setup := func(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error {
			_, err := reg.NewGroup("scores", cfg.CacheBytes, getter.Map(seedScores), &cache.GroupOptions{Peers: peers})
			return err
		}
		cfg, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: urls[i], envPeers: urls[0] + "," + urls[1], envSecret: "k"}))
		if err != nil {
			t.Fatal(err)
		}
		if nodes[i], err = NewNode(cfg, setup, &Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
			t.Fatal(err)
		}
		n := nodes[i]
		t.Cleanup(n.Close)
		serveFront(t, lns[i], fakeRuntime(t, func(ctx context.Context, payload []byte) ([]byte, error) {
			invokes.Add(1)
			return awslambda.NewHandler(n.h.ServeURL).Invoke(ctx, payload)
		}), 10*time.Second)
	}
	keys := []string{"Tom", "Jack", "Sam", "kkk"}
	g := nodes[0].Registry.Lookup("scores")
	remote := false
	for _, k := range keys {
		remote = remote || nodes[0].Peers.Owner(k) != urls[0]
	}
	g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
		want, ok := seedScores[keys[i]]
		switch {
		case !ok:
			if !errors.Is(err, getter.ErrNotFound) {
				t.Errorf("%s: %q, %v; want not found", keys[i], v, err)
			}
		case err != nil || v.String() != want:
			t.Errorf("%s: %q, %v; want %s", keys[i], v, err, want)
		}
	})
	if want := map[bool]int64{true: 1, false: 0}[remote]; invokes.Load() != want {
		t.Fatalf("GetMany made %d requests to the peer; want %d", invokes.Load(), want)
	}
	invokes.Store(0)
	if err := g.Purge(t.Context()); err != nil {
		t.Fatalf("a signed Purge: %v", err)
	}
	if invokes.Load() != 1 {
		t.Fatalf("Purge made %d requests; want 1", invokes.Load())
	}
	for i, n := range nodes {
		if s := n.Registry.Lookup("scores").Stats(); s.Main.Items+s.Hot.Items != 0 {
			t.Fatalf("node %d holds %d entries after Purge", i, s.Main.Items+s.Hot.Items)
		}
	}
}
