//go:build !js

package lambda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/geecache/geecache/internal/peertest"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsl "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// fakeInvoke is an InvokeAPI that answers with fn and records the inputs.
type fakeInvoke struct {
	fn   func(in *awsl.InvokeInput) (*awsl.InvokeOutput, error)
	last *awsl.InvokeInput
	opts awsl.Options
}

func (f *fakeInvoke) Invoke(_ context.Context, in *awsl.InvokeInput, optFns ...func(*awsl.Options)) (*awsl.InvokeOutput, error) {
	f.last = in
	f.opts = awsl.Options{}
	for _, o := range optFns {
		o(&f.opts)
	}
	return f.fn(in)
}

// handlerInvoke answers invocations with a test node's Handler, through
// the runtime's JSON path, as Lambda would.
func handlerInvoke(t *testing.T, h *handler, stream bool) func(in *awsl.InvokeInput) (*awsl.InvokeOutput, error) {
	var lh awslambda.Handler = awslambda.NewHandler(h.ServeURL)
	if stream {
		lh = awslambda.NewHandler(h.ServeStream)
	}
	return func(in *awsl.InvokeInput) (*awsl.InvokeOutput, error) {
		out, err := lh.Invoke(t.Context(), in.Payload)
		if err != nil {
			t.Fatalf("handler: %v", err)
		}
		return &awsl.InvokeOutput{StatusCode: 200, Payload: out}, nil
	}
}

func newTestPeers(t *testing.T, api InvokeAPI, o PeersOptions) *Peers {
	t.Helper()
	o.Peers.Client, o.Cluster.Secret, o.Logger = api, []byte("k"), slog.New(slog.DiscardHandler)
	p, err := NewPeers("", &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// TestInvokeClientRoundTrip fetches through a node's Handler in both invoke
// modes, with a qualifier and a resolved endpoint.
func TestInvokeClientRoundTrip(t *testing.T) {
	n := newTestNode(t, 10)
	h := newTestHandler(t, n.reg, &protocol.ServerOptions{Secret: []byte("k"), Self: "node-b"}) // signed requests are bound to the node's name
	for _, stream := range []bool{false, true} {
		api := &fakeInvoke{fn: handlerInvoke(t, h, stream)}
		p := newTestPeers(t, api, PeersOptions{Qualifier: "live", Resolve: func(name string) (string, string) {
			return "function", "http://127.0.0.1:1/" + name
		}})
		if err := p.Set("node-b"); err != nil {
			t.Fatal(err)
		}
		peer, ok := p.PickPeer("Tom")
		if !ok {
			t.Fatal("a client-only Peers owns a key")
		}
		v, _, err := peertest.Get(t.Context(), peer, "scores", "Tom")
		if err != nil || string(v) != "630" {
			t.Fatalf("stream=%v: Tom = %q, %v", stream, v, err)
		}
		if *api.last.FunctionName != "function" || *api.last.Qualifier != "live" || *api.opts.BaseEndpoint != "http://127.0.0.1:1/node-b" {
			t.Errorf("invoked %s:%s at %s", *api.last.FunctionName, *api.last.Qualifier, *api.opts.BaseEndpoint)
		}
		if peer.(*invokeClient).Addr() != "node-b" {
			t.Errorf("Addr = %q", peer.(*invokeClient).Addr())
		}
		if _, _, err := peertest.Get(t.Context(), peer, "scores", "kkk"); !errors.Is(err, getter.ErrNotFound) {
			t.Errorf("stream=%v: kkk: %v, want the owner's not found", stream, err)
		}
		if v, _, err := peertest.Get(t.Context(), peer, "binary", "x"); err != nil || string(v) != string(allBytes()) {
			t.Errorf("stream=%v: all-bytes: %d bytes, %v", stream, len(v), err)
		}
	}
}

// TestInvokeClientErrors maps each kind of failure to its error, none of
// which is "not found", so the calling group falls back.
func TestInvokeClientErrors(t *testing.T) {
	fnErr, _ := json.Marshal(map[string]string{"errorMessage": "boom", "errorType": "errorString"})
	cases := []struct {
		name   string
		fn     func(*awsl.InvokeInput) (*awsl.InvokeOutput, error)
		want   error
		status int
	}{
		{"throttled", func(*awsl.InvokeInput) (*awsl.InvokeOutput, error) {
			return nil, &types.TooManyRequestsException{Message: aws.String("Rate Exceeded.")}
		}, ErrThrottled, http.StatusTooManyRequests},
		{"function error header", func(*awsl.InvokeInput) (*awsl.InvokeOutput, error) {
			return &awsl.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"), Payload: fnErr}, nil
		}, ErrFunctionError, http.StatusBadGateway},
		{"function error payload", func(*awsl.InvokeInput) (*awsl.InvokeOutput, error) {
			return &awsl.InvokeOutput{StatusCode: 200, Payload: fnErr}, nil
		}, ErrFunctionError, http.StatusBadGateway},
		{"garbage", func(*awsl.InvokeInput) (*awsl.InvokeOutput, error) {
			return &awsl.InvokeOutput{StatusCode: 200, Payload: []byte("{not json")}, nil
		}, protocol.ErrBadResponse, 0},
		{"not found function", func(*awsl.InvokeInput) (*awsl.InvokeOutput, error) {
			return nil, &types.ResourceNotFoundException{Message: aws.String("Function not found")}
		}, new(types.ResourceNotFoundException), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPeers(t, &fakeInvoke{fn: tc.fn}, PeersOptions{})
			if err := p.Set("arn:aws:lambda:eu-west-1:123456789012:function:node-b"); err != nil {
				t.Fatal(err)
			}
			peer, _ := p.PickPeer("k")
			_, _, err := peertest.Get(t.Context(), peer, "g", "k")
			var target *types.ResourceNotFoundException
			switch {
			case err == nil || errors.Is(err, getter.ErrNotFound):
				t.Fatalf("err = %v", err)
			case errors.As(tc.want, &target):
				if !errors.As(err, &target) {
					t.Fatalf("err = %v, want the SDK's error", err)
				}
			case !errors.Is(err, tc.want):
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var pe *cache.PeerError
			if tc.status != 0 && (!errors.As(err, &pe) || pe.Status != tc.status) {
				t.Fatalf("err = %v, want a PeerError with status %d", err, tc.status)
			}
			if !strings.Contains(err.Error(), "node-b") {
				t.Errorf("error does not name the peer: %v", err)
			}
		})
	}
}

// A peer named with its own qualifier keeps it; the others get the option's.
func TestInvokeQualifier(t *testing.T) {
	api := &fakeInvoke{fn: func(*awsl.InvokeInput) (*awsl.InvokeOutput, error) { return nil, errors.New("x") }}
	for name, want := range map[string]string{"node-b": "live", "node-b:v2": "", "arn:aws:lambda:eu-west-1:123456789012:function:b:blue": ""} {
		p := newTestPeers(t, api, PeersOptions{Qualifier: "live"})
		if err := p.Set(name); err != nil {
			t.Fatal(err)
		}
		peer, _ := p.PickPeer("k")
		_, _, _ = peertest.Get(t.Context(), peer, "g", "k")
		if got := aws.ToString(api.last.Qualifier); got != want || *api.last.FunctionName != name {
			t.Errorf("%s: invoked %s with qualifier %q, want %q", name, *api.last.FunctionName, got, want)
		}
	}
}

func TestPeersNames(t *testing.T) {
	p := newTestPeers(t, &fakeInvoke{}, PeersOptions{})
	for _, bad := range []string{"no spaces", "ftp://x", "http://", "fn:a:b", strings.Repeat("x", 65)} {
		if err := p.Set(bad); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("Set(%q) = %v, want a configuration error", bad, err)
		}
	}
	if err := p.Set("node-a", "node-b:live", "HTTP://H:80/", "arn:aws:lambda:us-east-1:123456789012:function:c"); err != nil {
		t.Fatal(err)
	}
	want := "[arn:aws:lambda:us-east-1:123456789012:function:c http://h node-a node-b:live]"
	if got := fmt.Sprint(p.Addrs()); got != want {
		t.Errorf("Peers = %v, want %s", got, want)
	}
	if _, err := NewPeers("not a name", &PeersOptions{Peers: PeerOptions{Client: &fakeInvoke{}}}); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("bad self: %v", err)
	}
	if _, err := NewPeers("a", &PeersOptions{Peers: PeerOptions{Client: &fakeInvoke{}, Timeout: -1}}); !errors.Is(err, cache.ErrConfig) {
		t.Errorf("negative timeout: %v", err)
	}
}

// Without a Client, the first Set that lists a function makes one from
// the environment; without a region it fails, and keeps the old list.
func TestPeersDefaultClient(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	p, err := NewPeers("http://127.0.0.1:1", &PeersOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Set("http://127.0.0.1:1", "http://127.0.0.1:2"); err != nil {
		t.Fatalf("URLs only, no region: %v", err)
	}
	if err := p.Set("http://127.0.0.1:1", "node-b"); !errors.Is(err, cache.ErrConfig) || len(p.Addrs()) != 2 || p.Addrs()[1] != "http://127.0.0.1:2" {
		t.Fatalf("function without a region: %v, peers %v", err, p.Addrs())
	}
	t.Setenv("AWS_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	if err := p.Set("http://127.0.0.1:1", "node-b"); err != nil {
		t.Fatal(err)
	}
	c, ok := p.api.(*awsl.Client)
	if !ok || c.Options().Region != "eu-west-1" {
		t.Fatalf("default client %T %+v", p.api, p.api)
	}
	creds, err := c.Options().Credentials.Retrieve(t.Context())
	if err != nil || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SessionToken != "token" {
		t.Fatalf("credentials %+v, %v", creds, err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	if _, err := (envCredentials{}).Retrieve(t.Context()); !errors.Is(err, errNoCredentials) {
		t.Errorf("no credentials: %v", err)
	}
}

// A peer that keeps throttling is ejected by the group's peer health: its
// keys are then loaded locally without an invoke.
func TestThrottledPeerIsEjected(t *testing.T) {
	var calls int
	api := &fakeInvoke{fn: func(*awsl.InvokeInput) (*awsl.InvokeOutput, error) {
		calls++
		return nil, &types.TooManyRequestsException{Message: aws.String("Rate Exceeded.")}
	}}
	p := newTestPeers(t, api, PeersOptions{})
	if err := p.Set("node-b"); err != nil {
		t.Fatal(err)
	}
	g, err := cache.NewRegistry().NewGroup("scores", 1<<20, getter.Map(seedScores),
		&cache.GroupOptions{Peers: p, Logger: slog.New(slog.DiscardHandler), PeerPolicy: cache.PeerPolicy{EjectAfter: 3, EjectFor: time.Hour, NoHedge: true}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		key := fmt.Sprintf("k%d", i)
		if _, err := g.Get(t.Context(), key); !errors.Is(err, getter.ErrNotFound) {
			t.Fatalf("%s: %v, want the local source's not found", key, err)
		}
	}
	s := g.Stats()
	if calls != 3 || len(s.Peers) != 1 || !s.Peers[0].Ejected || s.Peers[0].Addr != "node-b" {
		t.Fatalf("%d invokes, stats %+v: want 3 invokes, then node-b ejected", calls, s.Peers)
	}
}
