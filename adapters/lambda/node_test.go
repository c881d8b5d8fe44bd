//go:build !js

package lambda

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/picker"
)

// serveNode serves n on ln the way a Function URL does, in-process: a Front
// invoking n's Handler through the runtime's JSON path.
func serveNode(t *testing.T, ln net.Listener, n *Node) {
	t.Helper()
	t.Cleanup(n.Close) // runs after the front has stopped
	serveFront(t, ln, fakeRuntime(t, awslambda.NewHandler(n.h.ServeURL).Invoke), 10*time.Second)
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
		setup := func(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error {
			_, err := reg.NewGroup("scores", cfg.CacheBytes, getter.Func(func(ctx context.Context, key string) ([]byte, error) {
				if c, ok := loads[i][key]; ok {
					c.Add(1)
				}
				return src.Get(ctx, key)
			}), &cache.GroupOptions{Peers: peers})
			return err
		}
		cfg, err := ConfigFromEnv(lookupMap(map[string]string{envSelfURL: urls[i], envPeers: urls[0] + "," + urls[1], envSecret: "k"}))
		if err != nil {
			t.Fatal(err)
		}
		if nodes[i], err = NewNode(cfg, setup, &Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
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
	if _, err := NewNode(cfg, func(Config, *cache.Registry, cache.PeerPicker) error { return boom }, nil); !errors.Is(err, boom) {
		t.Errorf("setup error: %v", err)
	}
	if _, err := NewNode(cfg, nil, nil); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("nil setup: err = %v, want cache.ErrConfig", err)
	}
	ok := func(Config, *cache.Registry, cache.PeerPicker) error { return nil }
	n, err := NewNode(cfg, ok, nil)
	if err != nil || n.Config.Cluster.MaxValueBytes != maxValueBytes {
		t.Errorf("zero MaxValueBytes: %v, %d", err, n.Config.Cluster.MaxValueBytes)
	}
}

// A Lambda node and a net/http node given the same ring options agree on
// every owner: both place keys with a picker.Peers built from the same
// nethttp.Cluster, so no option is lost on the way.
func TestLambdaAndNetHTTPNodesAgreeOnOwners(t *testing.T) {
	urls := []string{"https://a.lambda-url.eu-west-1.on.aws", "https://b.lambda-url.eu-west-1.on.aws", "http://10.0.0.3:8001"}
	cfg := Config{SelfURL: urls[0], Peers: urls}
	ok := func(Config, *cache.Registry, cache.PeerPicker) error { return nil }
	for _, ring := range []nethttp.Cluster{{}, {Replicas: 3, Hash: picker.CRC32}} {
		cfg.Cluster = ring
		n, err := NewNode(cfg, ok, &Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		pool, err := nethttp.NewPool(urls[2], cache.NewRegistry(), &nethttp.PoolOptions{Cluster: ring, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if err := pool.Set(urls...); err != nil {
			t.Fatal(err)
		}
		def, _ := picker.NewPeers("", nil, &picker.Options{Logger: slog.New(slog.DiscardHandler)}) // the default ring
		if err := def.Set(urls...); err != nil {
			t.Fatal(err)
		}
		differs := 0
		for i := range 2000 {
			k := fmt.Sprintf("key-%d", i)
			if n.Peers.Owner(k) != pool.Owner(k) {
				t.Fatalf("ring %+v: key %q: the Lambda node says %s, the net/http node %s", ring, k, n.Peers.Owner(k), pool.Owner(k))
			}
			if def.Owner(k) != pool.Owner(k) {
				differs++
			}
		}
		if (ring.Replicas != 0) != (differs > 0) {
			t.Fatalf("ring %+v: %d of 2000 owners differ from the default ring's", ring, differs)
		}
	}
}

func TestStartErrors(t *testing.T) {
	setup := func(Config, *cache.Registry, cache.PeerPicker) error { return nil }
	t.Setenv("AWS_LAMBDA_RUNTIME_API", "")
	t.Setenv(envSelfURL, "")
	t.Setenv(envPeers, "")
	if err := Start(context.Background(), setup, nil); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("no config: %v, want cache.ErrConfig", err)
	}
	t.Setenv(envSelfURL, "http://127.0.0.1:1")
	t.Setenv(envPeers, "http://127.0.0.1:1")
	if err := Start(context.Background(), setup, nil); !errors.Is(err, ErrNoRuntime) {
		t.Errorf("no runtime: %v, want ErrNoRuntime", err)
	}
}

var seedScores = map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"}

// userClient asks nodes for keys as an application does (not as a peer:
// the node forwards to the owner), signing with secret if set.
type userClient struct {
	hc     *http.Client
	secret string
}

func newUserClient(t *testing.T, secret string) *userClient {
	t.Helper()
	c := &userClient{
		hc:     &http.Client{Transport: nethttp.NewTransport(), Timeout: 30 * time.Second},
		secret: secret,
	}
	t.Cleanup(c.hc.CloseIdleConnections)
	return c
}

func (c *userClient) get(t *testing.T, node, group, key string) (int, []byte) {
	t.Helper()
	// A user's request, not a peer's: no peer header, so the node may
	// forward it. Signed as PROTOCOL.md says, independently of package
	// protocol.
	preq := protocol.Request{Method: http.MethodGet, Path: protocol.Path(group, key), Header: http.Header{}}
	if c.secret != "" {
		ts := strconv.FormatInt(time.Now().Unix(), 10)
		m := hmac.New(sha256.New, []byte(c.secret))
		m.Write([]byte("GEECACHE2\nGET\n" + node + "\n" + preq.Path + "\n\n" + ts))
		preq.Header.Set(protocol.HeaderTimestamp, ts)
		preq.Header.Set(protocol.HeaderSignature, hex.EncodeToString(m.Sum(nil)))
	}
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
