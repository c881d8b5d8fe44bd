//go:build !js

package lambda

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/lambda/lambdatest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/cache/cachetest"
)

// Lambda nodes keep every promise the conformance kit checks, whichever
// way they reach their peers: through the Lambda Invoke API (nodes named
// by function, each served by an in-process runtime that the SDK's Invoke
// calls reach) and through Function URLs (nodes named by URL, each behind
// a lambdatest.Front, one execution environment per node, invoking an
// in-process runtime). Every invoke passes through a gate, which is how
// the kit hangs a node: its invokes wait until resumed, their connections
// open, as a frozen execution environment's would. A lying node's runtime
// flips a byte of each answer's body and keeps its status and headers,
// checksum included: the asking node's checksum check must refuse it.
func TestConformance(t *testing.T) {
	t.Run("Invoke", func(t *testing.T) {
		cachetest.TestTransport(t, func(t *testing.T, o cachetest.Options) cachetest.Cluster {
			return conformanceCluster(t, o, false)
		})
	})
	t.Run("FunctionURL", func(t *testing.T) {
		cachetest.TestTransport(t, func(t *testing.T, o cachetest.Options) cachetest.Cluster {
			return conformanceCluster(t, o, true)
		})
	})
}

// conformanceCluster starts o.Nodes Lambda nodes for the kit, reached
// through Function URLs if urls, else through the Invoke API.
func conformanceCluster(t *testing.T, o cachetest.Options, urls bool) cachetest.Cluster {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	nodes := make([]*Node, o.Nodes)
	gates := make([]*gate, o.Nodes)
	lying := make([]atomic.Bool, o.Nodes)
	names := make([]string, o.Nodes)
	eps := map[string]string{} // the runtime of each node named by function
	for i := range nodes {
		gates[i] = &gate{}
		srv, ep := lambdatest.NewRuntime(func(ctx context.Context, payload []byte) ([]byte, error) {
			gates[i].wait(ctx)
			out, err := awslambda.NewHandler(nodes[i].ServeURL).Invoke(ctx, payload)
			if err != nil || !lying[i].Load() {
				return out, err
			}
			return corruptBody(out)
		})
		t.Cleanup(srv.Close)
		if urls {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			names[i] = "http://" + ln.Addr().String()
			serveFront(t, ln, ep, 30*time.Second)
		} else {
			names[i] = fmt.Sprintf("node-%c", 'a'+i)
			eps[names[i]] = srv.URL
		}
	}
	// Registered last, so run first: no invoke stays held while the
	// fronts and runtimes stop.
	t.Cleanup(func() {
		for _, g := range gates {
			g.open()
		}
	})
	opts := &Options{Logger: quiet}
	if !urls {
		opts.Peers.Client = sdkClient(t)
	}
	c := cachetest.Cluster{Hang: func(i int) func() {
		gates[i].close()
		return gates[i].open
	}, Lie: func(i int) func() {
		lying[i].Store(true)
		return func() { lying[i].Store(false) }
	}}
	for i := range nodes {
		cfg := Config{SelfURL: names[i], Peers: names, CacheBytes: 1 << 20}
		if urls {
			cfg.Cluster.Secret = []byte("conformance") // a Function URL with AuthType NONE needs one
		} else {
			cfg.Endpoints = eps
			cfg.UnsignedWrites = true // IAM authenticates the Invoke API's callers
		}
		var err error
		nodes[i], err = NewNode(cfg, func(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error {
			gopts := o.GroupOptions
			gopts.Peers, gopts.Logger = peers, quiet
			c.Pickers = append(c.Pickers, peers)
			_, err := reg.NewGroup(o.Group, cfg.CacheBytes, o.Getter(i), &gopts)
			return err
		}, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nodes[i].Close)
		c.Groups = append(c.Groups, nodes[i].Registry.Lookup(o.Group))
	}
	return c
}

// corruptBody returns the Function URL response out with one byte of its
// body changed (or one added to an empty body), still a well-formed
// response: status and headers, the checksum among them, stay as the
// node sealed them.
func corruptBody(out []byte) ([]byte, error) {
	var res events.LambdaFunctionURLResponse
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("corrupting a response: %w", err)
	}
	body := []byte(res.Body)
	if res.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(res.Body); err != nil {
			return nil, fmt.Errorf("corrupting a response: %w", err)
		}
	}
	if len(body) == 0 {
		body = []byte{'x'}
	} else {
		body[0] ^= 0x01
	}
	res.Body = string(body)
	if res.IsBase64Encoded {
		res.Body = base64.StdEncoding.EncodeToString(body)
	}
	return json.Marshal(&res)
}

// A gate holds the invokes of a node while it is closed.
type gate struct {
	mu     sync.Mutex
	closed chan struct{} // nil while open; closed to let the held invokes go
}

// close holds the invokes that start from now on, until open.
func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed == nil {
		g.closed = make(chan struct{})
	}
}

// open lets the held invokes go, and the next ones pass.
func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed != nil {
		close(g.closed)
		g.closed = nil
	}
}

// wait returns once the gate is open, or when ctx ends (the runtime's
// caller gave up).
func (g *gate) wait(ctx context.Context) {
	g.mu.Lock()
	ch := g.closed
	g.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}
