//go:build !js

package lambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/internal/peerhttp"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
)

// ErrNoRuntime is returned by Start outside a Lambda runtime (when
// AWS_LAMBDA_RUNTIME_API is not set).
var ErrNoRuntime = errors.New("geecache: not running under a Lambda runtime (AWS_LAMBDA_RUNTIME_API is not set)")

// A Setup adds a node's groups to reg, each with cfg.CacheBytes (or a size
// of its own) and cache.GroupOptions{Peers: peers}. It runs once per
// execution environment, at start-up.
type Setup func(cfg Config, reg *cache.Registry, peers cache.PeerPicker) error

// A Node is a configured Lambda node: its registry, the peer picker its
// groups fetch through, and the handlers of its Function URL events
// (ServeURL, ServeStream).
type Node struct {
	// Config is the node's configuration, with its defaults set and its
	// names as the ring knows them (Peers.Owner): SelfURL and Peers
	// normalised (a URL's scheme and host in lower case, without a default
	// port or a trailing "/"), in the given order.
	Config   Config
	Registry *cache.Registry
	// Peers picks the owner of a key and fetches it: from peers named by
	// function through the Lambda Invoke API, from peers named by URL
	// (Function URLs, net/http nodes) with the net/http binding's Client.
	// Its ring is built as a nethttp.Pool's, so Lambda and net/http nodes
	// serve each other and agree on owners.
	Peers *Peers

	h   *handler
	sig http.RoundTripper // signs for URL peers with URLAuthIAM, or nil
}

// Options configures NewNode and Start. As everywhere in GeeCache (see
// cache.GroupOptions), the zero value of a field means its default and a
// nil pointer means all defaults. What every node of a cluster shares
// through the environment (Secret, MaxValueBytes, Qualifier, ...) is in
// the Config.
type Options struct {
	// Logger receives the node's logs. Nil means slog.Default(); on
	// Lambda, stderr goes to CloudWatch. Start logs one line at Info as
	// the node starts (its URL, peers, mode and cache size: what a cold
	// start runs with, once per execution environment); the rest of the
	// node's routine events are Debug.
	Logger *slog.Logger

	// ShowErrors sends error details (a source's error text, a peer's
	// address) to callers that did not sign their request. Off by
	// default: a Function URL may be reachable by anyone; the detail
	// goes to the log.
	ShowErrors bool

	// MaxSkew is how far the timestamp of a signed request to the node
	// may lie from the node's clock; 0 means 30 s, the protocol's
	// default.
	MaxSkew time.Duration

	// Peers says how the node reaches its peers (what every node of a
	// cluster must share is in Config.Cluster). Its Propagator also
	// extracts context from the requests the node serves.
	Peers PeerOptions
}

// NewNode builds a node from cfg: the registry, the peers, the groups (by
// calling setup) and the handlers of its events. Start calls it; tests
// and custom entry points can call it directly. opts may be nil.
//
// Without Options.Peers.Client, NewNode makes the Lambda API client from
// the environment's credentials and region (see PeerOptions.Client) when
// cfg.Peers lists a peer named by function.
func NewNode(cfg Config, setup Setup, opts *Options) (*Node, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if limit := cfg.valueCap(); cfg.Cluster.MaxValueBytes <= 0 || cfg.Cluster.MaxValueBytes > limit {
		cfg.Cluster.MaxValueBytes = limit
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	po := o.Peers
	var resolve func(string) (string, string)
	if len(cfg.Endpoints) > 0 {
		eps := cfg.Endpoints
		resolve = func(name string) (string, string) {
			if ep, ok := eps[name]; ok {
				return "function", ep // the emulator's one function
			}
			return "", ""
		}
	}
	var sig http.RoundTripper
	if cfg.URLAuthIAM {
		var err error
		if sig, err = NewSigV4Transport(&SigV4Options{Base: po.Transport}); err != nil {
			return nil, err
		}
		po.Transport = sig
	}
	reg := cache.NewRegistry()
	pool, err := NewPeers(cfg.SelfURL, &PeersOptions{Cluster: cfg.Cluster,
		Qualifier: cfg.Qualifier, Resolve: resolve, Logger: o.Logger, Peers: po})
	if err != nil {
		return nil, err
	}
	names := cfg.Peers
	if err := pool.Set(names...); err != nil {
		return nil, err
	}
	cfg.SelfURL, cfg.Peers = pool.Self(), make([]string, len(cfg.Peers))
	for i, name := range names {
		cfg.Peers[i], _ = normalizeName(name) // Set has checked it
	}
	// Without a secret, writes are refused unless the user asked for them
	// unsigned (Config.UnsignedWrites), as where IAM authenticates every
	// caller before the function runs.
	srv, err := protocol.NewServer(reg, &protocol.ServerOptions{Secret: cfg.Cluster.Secret, Self: cfg.SelfURL, MaxValueBytes: cfg.Cluster.MaxValueBytes,
		MaxSkew: o.MaxSkew, HideErrors: !o.ShowErrors, Logger: o.Logger, Propagator: po.Propagator, UnsignedWrites: cfg.UnsignedWrites})
	if err != nil {
		return nil, err
	}
	if setup == nil {
		return nil, fmt.Errorf("geecache: %w: nil Setup", cache.ErrConfig)
	}
	if err := setup(cfg, reg, pool); err != nil {
		return nil, fmt.Errorf("geecache: lambda node setup: %w", err)
	}
	h, err := newHandler(srv, cfg.Cluster.BasePath)
	if err != nil {
		return nil, err
	}
	return &Node{Config: cfg, Registry: reg, Peers: pool, h: h, sig: sig}, nil
}

// ServeURL answers a Function URL request in BUFFERED mode (a Function
// URL's default InvokeMode), as Start does unless Config.Stream is set;
// register it with aws-lambda-go's lambda.Start in a custom entry point.
// The body of the response is always base64 with IsBase64Encoded set, so
// that any bytes survive; a value that would not fit Lambda's 6 MiB
// response is refused with 413 rather than cut off. It never returns an
// error: protocol errors are HTTP statuses, as on every binding.
func (n *Node) ServeURL(ctx context.Context, ev *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLResponse, error) {
	return n.h.ServeURL(ctx, ev)
}

// ServeStream answers a Function URL request in RESPONSE_STREAM mode, as
// Start does when Config.Stream is set, for URLs configured with that
// InvokeMode (the function must be built with -tags lambda.norpc or run on
// a provided.* runtime). The body is sent raw after the Function URL's
// JSON prelude; a value over the cap of Config.Cluster.MaxValueBytes is refused
// with 413 rather than cut off.
func (n *Node) ServeStream(ctx context.Context, ev *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	return n.h.ServeStream(ctx, ev)
}

// Close closes the idle connections to the node's peers.
func (n *Node) Close() {
	_ = n.Peers.Close()
	peerhttp.CloseIdle(n.sig)
}

// Start runs a GeeCache node as a Lambda function, in a few lines of main:
//
//	err := lambda.Start(ctx, func(cfg lambda.Config, reg *cache.Registry, peers cache.PeerPicker) error {
//		_, err := reg.NewGroup("scores", cfg.CacheBytes, db, &cache.GroupOptions{Peers: peers})
//		return err
//	}, nil)
//
// It reads the Config from the environment (see the package doc), builds
// the node with NewNode, and hands it to the Lambda runtime loop, serving
// Node.ServeURL, or Node.ServeStream when GEECACHE_INVOKE_MODE is
// RESPONSE_STREAM. ctx is the base context of every invocation.
//
// The ring's Replicas and Hash are not in the environment: Start uses the
// defaults, as a nethttp.Pool does. A cluster with other ones starts its
// Lambda nodes from a main of its own, with the same Cluster on every node:
//
//	cfg, err := lambda.ConfigFromEnv(os.LookupEnv)
//	cfg.Cluster.Replicas, cfg.Cluster.Hash = 160, picker.CRC32
//	n, err := lambda.NewNode(cfg, setup, nil)
//	awslambda.Start(n.ServeURL) // aws-lambda-go's
//
// Start returns only an error from before the loop starts (configuration,
// setup, or ErrNoRuntime outside Lambda); once the loop runs it does not
// return, and a failure of the runtime API ends the process, as
// aws-lambda-go's lambda.Start does, so that Lambda starts a fresh one.
func Start(ctx context.Context, setup Setup, opts *Options) error {
	cfg, err := ConfigFromEnv(os.LookupEnv)
	if err != nil {
		return err
	}
	if v, _ := os.LookupEnv("AWS_LAMBDA_RUNTIME_API"); v == "" {
		return ErrNoRuntime
	}
	n, err := NewNode(cfg, setup, opts)
	if err != nil {
		return err
	}
	log := slog.Default()
	if opts != nil && opts.Logger != nil {
		log = opts.Logger
	}
	log.LogAttrs(ctx, slog.LevelInfo, "geecache: lambda node starting",
		slog.String("self", cfg.SelfURL), slog.Any("peers", n.Config.Peers), slog.String("mode", cfg.mode()),
		slog.Bool("auth", cfg.Cluster.Secret != nil), slog.Bool("unsignedWrites", cfg.Cluster.Secret == nil && cfg.UnsignedWrites),
		slog.Int64("cacheBytes", cfg.CacheBytes))
	if cfg.Stream {
		awslambda.StartWithOptions(n.ServeStream, awslambda.WithContext(ctx))
	} else {
		awslambda.StartWithOptions(n.ServeURL, awslambda.WithContext(ctx))
	}
	return nil // not reached: the runtime loop does not return
}
