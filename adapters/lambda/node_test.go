package lambda

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// serveNode serves n on ln the way a Function URL does, in-process: a Front
// invoking n's Handler through the runtime's JSON path.
func serveNode(t *testing.T, ln net.Listener, n *Node) {
	t.Helper()
	t.Cleanup(n.Close) // runs after the front has stopped
	serveFront(t, ln, fakeRuntime(t, awslambda.NewHandler(n.Handler.ServeURL).Invoke), 10*time.Second)
}

// TestNodesServeEachOther runs two Lambda nodes in-process, each behind a
// Front, with authentication on: every key is answered by both, and loaded
// once, by its owner.
func TestNodesServeEachOther(t *testing.T) {
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
	var loads [2]map[string]*atomic.Int64
	nodes := make([]*Node, 2)
	for i := range nodes {
		loads[i] = map[string]*atomic.Int64{"Tom": {}, "Jack": {}, "Sam": {}}
		src := getter.Map(seedScores)
		setup := func(cfg Config, peers cache.PeerPicker) (*cache.Registry, error) {
			reg := cache.NewRegistry()
			_, err := reg.NewGroup("scores", cfg.CacheBytes, getter.Func(func(ctx context.Context, key string) ([]byte, error) {
				if c, ok := loads[i][key]; ok {
					c.Add(1)
				}
				return src.Get(ctx, key)
			}), cache.WithPeers(peers))
			return reg, err
		}
		cfg, err := ConfigFromEnv(lookupMap(map[string]string{EnvSelfURL: urls[i], EnvPeers: urls[0] + "," + urls[1], EnvSecret: "k"}))
		if err != nil {
			t.Fatal(err)
		}
		if nodes[i], err = NewNode(cfg, setup, WithLogger(slog.New(slog.DiscardHandler))); err != nil {
			t.Fatal(err)
		}
		serveNode(t, lns[i], nodes[i])
	}

	client := newUserClient(t, "k")
	for _, u := range urls {
		for key, want := range seedScores {
			if code, body := client.get(t, u, "scores", key); code != 200 || string(body) != want {
				t.Errorf("%s: %s = %d %q", u, key, code, body)
			}
		}
	}
	for key := range seedScores {
		owner := nodes[0].Peers.Owner(key)
		for i, u := range urls {
			want := int64(0)
			if u == owner {
				want = 1
			}
			if got := loads[i][key].Load(); got != want {
				t.Errorf("%s loaded %s %d times, want %d (owner %s)", u, key, got, want, owner)
			}
		}
	}
	if s := nodes[0].Registry.Lookup("scores").Stats(); s.PeerLoads+s.PeerRequests == 0 {
		t.Errorf("node 0 never talked to its peer: %+v", s)
	}
}

func TestNewNodeSetupErrors(t *testing.T) {
	cfg := Config{SelfURL: "http://127.0.0.1:1", Peers: []string{"http://127.0.0.1:1"}}
	boom := errors.New("boom")
	if _, err := NewNode(cfg, func(Config, cache.PeerPicker) (*cache.Registry, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("setup error: %v", err)
	}
	if _, err := NewNode(cfg, func(Config, cache.PeerPicker) (*cache.Registry, error) { return nil, nil }); err == nil {
		t.Error("nil registry: no error")
	}
	n, err := NewNode(cfg, func(Config, cache.PeerPicker) (*cache.Registry, error) { return cache.NewRegistry(), nil })
	if err != nil || n.Config.MaxValueBytes != MaxValueBytes {
		t.Errorf("zero MaxValueBytes: %v, %d", err, n.Config.MaxValueBytes)
	}
}

func TestStartErrors(t *testing.T) {
	setup := func(Config, cache.PeerPicker) (*cache.Registry, error) { return cache.NewRegistry(), nil }
	t.Setenv("AWS_LAMBDA_RUNTIME_API", "")
	t.Setenv(EnvSelfURL, "")
	t.Setenv(EnvPeers, "")
	if err := Start(context.Background(), setup); !errors.Is(err, ErrConfig) {
		t.Errorf("no config: %v, want ErrConfig", err)
	}
	t.Setenv(EnvSelfURL, "http://127.0.0.1:1")
	t.Setenv(EnvPeers, "http://127.0.0.1:1")
	if err := Start(context.Background(), setup); !errors.Is(err, ErrNoRuntime) {
		t.Errorf("no runtime: %v, want ErrNoRuntime", err)
	}
}

var seedScores = map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"}

// userClient asks nodes for keys as an application does (not as a peer:
// the node forwards to the owner), signing with secret if set.
type userClient struct {
	hc    *http.Client
	proto *protocol.Client
}

func newUserClient(t *testing.T, secret string) *userClient {
	t.Helper()
	c := &userClient{
		hc:    &http.Client{Transport: nethttp.NewTransport(), Timeout: 30 * time.Second},
		proto: protocol.NewClient(protocol.WithSecret([]byte(secret))),
	}
	t.Cleanup(c.hc.CloseIdleConnections)
	return c
}

func (c *userClient) get(t *testing.T, node, group, key string) (int, []byte) {
	t.Helper()
	preq := c.proto.NewRequest(group, key)
	preq.Header.Del(protocol.HeaderPeer)
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, node+preq.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = preq.Header
	res, err := c.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s/%s: %v", node, group, key, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, body
}
