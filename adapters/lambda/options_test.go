//go:build !js

package lambda

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/geecache/geecache/internal/peertest"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	awslambda "github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awsl "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// The fields of Options and PeerOptions are each read: these tests give
// every field a value that changes what a node does, and watch the change.

// scoresSetup adds the demo's scores group with the node's peers.
//
// Its peers may answer values its own source does not have (the tests see
// where a value came from), so it does not hedge: on a loaded machine a
// hedge's local "not found" would win over a peer slower than the delay.
func scoresSetup(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error {
	_, err := reg.NewGroup("scores", 1<<20, getter.Map(seedScores), &cache.GroupOptions{Peers: peers, PeerPolicy: cache.PeerPolicy{NoHedge: true}})
	return err
}

// serveEvent answers a Function URL GET event built from a protocol
// request with n.ServeURL.
func serveEvent(t *testing.T, n *Node, path string, hdr http.Header) *events.LambdaFunctionURLResponse {
	t.Helper()
	ev := &events.LambdaFunctionURLRequest{RawPath: path, Headers: map[string]string{}}
	ev.RequestContext.HTTP.Method = http.MethodGet
	for k, vs := range hdr {
		ev.Headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	res, err := n.ServeURL(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Options.MaxSkew is how old a signed request a node takes: a request
// signed 45 s ago is refused by a node with the default (30 s) and served
// by one with MaxSkew 1 min.
func TestNodeMaxSkew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		secret := []byte("k")
		cfg := Config{SelfURL: "node-a", Peers: []string{"node-a"}, Cluster: nethttp.Cluster{Secret: secret}}
		quiet := slog.New(slog.DiscardHandler)
		lenient, err := NewNode(cfg, scoresSetup, &Options{Logger: quiet, MaxSkew: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		strict, err := NewNode(cfg, scoresSetup, &Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		req := protoClient(t, secret).NewRequest(t.Context(), "node-a", "scores", "Tom", false)
		time.Sleep(45 * time.Second)
		if res := serveEvent(t, strict, req.Path, req.Header); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("default MaxSkew, request 45 s old: %d, want 401", res.StatusCode)
		}
		res := serveEvent(t, lenient, req.Path, req.Header)
		body, _ := base64.StdEncoding.DecodeString(res.Body)
		if res.StatusCode != http.StatusOK || string(body) != "630" {
			t.Errorf("MaxSkew 1 min, request 45 s old: %d %q, want 200 630", res.StatusCode, body)
		}
		time.Sleep(time.Second) // the load's worker ends after 100 ms idle
	})
}

// countingTransport records the paths it sends.
type countingTransport struct {
	base  http.RoundTripper
	mu    sync.Mutex
	paths []string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.paths = append(c.paths, r.URL.EscapedPath())
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

// A Lambda node reaches a peer named by URL through PeerOptions.Transport,
// under Config.Cluster.BasePath; Node.Config holds the peer's name as the ring
// knows it (normalised), which is what Peers.Owner returns. A key the URL
// peer's source does not have is not found there, and the node says so
// without loading it.
func TestNodeReachesURLPeersWithPeerOptions(t *testing.T) {
	peerReg := cache.NewRegistry()
	fromPeer := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if key == "missing" {
			return nil, fmt.Errorf("%q: %w", key, getter.ErrNotFound)
		}
		return []byte("peer:" + key), nil
	})
	if _, err := peerReg.NewGroup("scores", 1<<20, fromPeer, nil); err != nil {
		t.Fatal(err)
	}
	h, err := nethttp.NewPool("", peerReg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{BasePath: "/cache"}, Logger: slog.New(slog.DiscardHandler)}) // serves only
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	base := nethttp.NewTransport()
	t.Cleanup(base.CloseIdleConnections)
	tr := &countingTransport{base: base}

	given := strings.Replace(srv.URL, "http://", "HTTP://", 1) + "/"
	cfg := Config{SelfURL: "node-a", Peers: []string{"node-a", given}, Cluster: nethttp.Cluster{BasePath: "/cache"}}
	n, err := NewNode(cfg, scoresSetup, &Options{Logger: slog.New(slog.DiscardHandler),
		Peers: PeerOptions{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	if n.Config.SelfURL != "node-a" || len(n.Config.Peers) != 2 || n.Config.Peers[1] != srv.URL {
		t.Fatalf("Node.Config names %q %q, want node-a and %s", n.Config.SelfURL, n.Config.Peers, srv.URL)
	}
	var key string
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("k%d", i); n.Peers.Owner(k) == n.Config.Peers[1] {
			key = k
		} else if i > 1000 {
			t.Fatal("the URL peer owns none of 1000 keys")
		}
	}
	g := n.Registry.Lookup("scores")
	v, err := g.Get(t.Context(), key)
	if err != nil || v.String() != "peer:"+key {
		t.Fatalf("Get(%s) = %q, %v; want the peer's value", key, v.String(), err)
	}
	tr.mu.Lock()
	paths := append([]string(nil), tr.paths...)
	tr.mu.Unlock()
	if len(paths) != 1 || !strings.HasPrefix(paths[0], "/cache/_geecache/scores/") {
		t.Fatalf("transport sent %q, want one request under /cache/_geecache/", paths)
	}
	if n.Peers.Owner("missing") == n.Config.Peers[1] {
		if _, err := g.Get(t.Context(), "missing"); !errors.Is(err, getter.ErrNotFound) {
			t.Errorf("missing key on the URL peer: %v, want ErrNotFound", err)
		}
	}
}

// blockingInvoke is an InvokeAPI that answers only when its context ends.
type blockingInvoke struct{}

func (blockingInvoke) Invoke(ctx context.Context, _ *awsl.InvokeInput, _ ...func(*awsl.Options)) (*awsl.InvokeOutput, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// PeerOptions.Timeout bounds an invocation of a peer named by function
// (10 s when 0), whatever the caller's context allows.
func TestPeerOptionsTimeoutBoundsInvokes(t *testing.T) {
	for _, tc := range []struct {
		timeout, want time.Duration
	}{{0, 10 * time.Second}, {2 * time.Second, 2 * time.Second}} {
		synctest.Test(t, func(t *testing.T) {
			p, err := NewPeers("node-a", &PeersOptions{Logger: slog.New(slog.DiscardHandler),
				Peers: PeerOptions{Client: blockingInvoke{}, Timeout: tc.timeout}})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Set("node-a", "node-b"); err != nil {
				t.Fatal(err)
			}
			var peer cache.Peer
			for i := 0; peer == nil; i++ {
				peer, _ = p.PickPeer(fmt.Sprintf("k%d", i))
			}
			start := time.Now()
			_, _, err = peertest.Get(t.Context(), peer, "scores", "Tom")
			if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took != tc.want {
				t.Errorf("Timeout %v: %v after %v, want DeadlineExceeded after %v", tc.timeout, err, took, tc.want)
			}
		})
	}
}

// Peers.Close closes the idle connections of an SDK client given as
// PeerOptions.Client (the client stays usable), so that a program that
// stops its peers leaves no connection to the Lambda API behind.
func TestPeersCloseClosesClientIdleConnections(t *testing.T) {
	node, err := NewNode(Config{SelfURL: "node-b", Peers: []string{"node-b"}}, scoresSetup, &Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	fn := awslambda.NewHandler(node.ServeURL)
	closed := make(chan struct{}, 4)
	api := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		payload, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		out, err := fn.Invoke(r.Context(), payload)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(out)
	}))
	api.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	api.Start()
	t.Cleanup(api.Close)
	client := awsl.New(awsl.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		HTTPClient:   &http.Client{Transport: nethttp.NewTransport()},
		Retryer:      aws.NopRetryer{},
		BaseEndpoint: aws.String(api.URL),
	})
	p, err := NewPeers("node-a", &PeersOptions{Logger: slog.New(slog.DiscardHandler), Peers: PeerOptions{Client: client}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Set("node-a", "node-b"); err != nil {
		t.Fatal(err)
	}
	var peer cache.Peer
	for i := 0; peer == nil; i++ {
		peer, _ = p.PickPeer(fmt.Sprintf("k%d", i))
	}
	get := func() {
		t.Helper()
		if v, _, err := peertest.Get(t.Context(), peer, "scores", "Tom"); err != nil || string(v) != "630" {
			t.Fatalf("Get through the Invoke API: %q, %v", v, err)
		}
	}
	get()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Peers.Close left the client's idle connection open")
	}
	get() // still usable
	_ = p.Close()
	<-closed
}

// The fields of Config.Cluster are each read by a node: Secret (an
// unsigned request is refused), MaxValueBytes (a larger value is refused),
// BasePath (a request under it is served; the URL peers are asked under
// it, TestNodeReachesURLPeersWithPeerOptions); Replicas and Hash place
// keys as a net/http node given the same Cluster does
// (TestLambdaAndNetHTTPNodesAgreeOnOwners).
func TestNodeClusterFieldsAreRead(t *testing.T) {
	quiet := &Options{Logger: slog.New(slog.DiscardHandler)}
	get := func(c nethttp.Cluster, path string) int {
		t.Helper()
		n, err := NewNode(Config{SelfURL: "node-a", Peers: []string{"node-a"}, Cluster: c}, scoresSetup, quiet)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Close)
		return serveEvent(t, n, path, http.Header{"X-Geecache-Peer": {"1"}}).StatusCode
	}
	for _, tc := range []struct {
		name    string
		cluster nethttp.Cluster
		path    string
		want    int
	}{
		{"defaults", nethttp.Cluster{}, "/_geecache/scores/Tom", http.StatusOK},
		{"Secret, unsigned", nethttp.Cluster{Secret: []byte("k")}, "/_geecache/scores/Tom", http.StatusUnauthorized},
		{"MaxValueBytes under the value", nethttp.Cluster{MaxValueBytes: 2}, "/_geecache/scores/Tom", http.StatusRequestEntityTooLarge},
		{"BasePath", nethttp.Cluster{BasePath: "/cache"}, "/cache/_geecache/scores/Tom", http.StatusOK},
		{"no BasePath", nethttp.Cluster{}, "/cache/_geecache/scores/Tom", http.StatusBadRequest},
	} {
		if got := get(tc.cluster, tc.path); got != tc.want {
			t.Errorf("%s: GET %s answered %d, want %d", tc.name, tc.path, got, tc.want)
		}
	}
}

// PeersOptions.Logger receives the changes of the peer list (at Debug),
// with the names as the ring knows them.
func TestPeersOptionsLoggerIsRead(t *testing.T) {
	var buf bytes.Buffer
	debug := &slog.HandlerOptions{Level: slog.LevelDebug}
	p, err := NewPeers("node-a", &PeersOptions{Logger: slog.New(slog.NewTextHandler(&buf, debug)), Peers: PeerOptions{Client: blockingInvoke{}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Set("node-a", "HTTP://B:80/"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "peers set") || !strings.Contains(buf.String(), "http://b") {
		t.Errorf("Logger got %q, want the new list", buf.String())
	}
}
