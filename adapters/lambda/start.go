package lambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
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
// groups fetch through, and the Handler that serves its Function URL.
type Node struct {
	Config   Config
	Registry *cache.Registry
	// Peers picks the owner of a key and fetches it: from peers named by
	// function through the Lambda Invoke API, from peers named by URL
	// (Function URLs, net/http nodes) with the net/http binding's Client.
	// Its ring takes the same options as a nethttp.Pool's, so Lambda and
	// net/http nodes serve each other and agree on owners.
	Peers   *Peers
	Handler *Handler

	sig *SigV4Transport // signs for URL peers with URLAuth AWS_IAM, or nil
}

// Options configures NewNode and Start. As everywhere in GeeCache (see
// cache.GroupOptions), the zero value of a field means its default and a
// nil pointer means all defaults.
type Options struct {
	// Logger receives the node's logs. Nil means slog.Default(); on
	// Lambda, stderr goes to CloudWatch.
	Logger *slog.Logger

	// Peers configures how the node reaches its peers and places keys:
	// Timeout, BasePath (of the peers), Replicas, Hash, Transport,
	// Propagator, as for a net/http node (every node must use the same
	// ring options). Secret and MaxValueBytes come from the Config: setting
	// them here is an error, as is UnsignedWrites (Config.UnsignedWrites).
	// MaxSkew and Propagator also configure the node's own protocol server.
	Peers nethttp.PoolOptions

	// Invoke configures how peers named by function are invoked. Its
	// Qualifier and Resolve default to the Config's Qualifier and
	// Endpoints.
	Invoke InvokeOptions

	// ShowErrors sends error details (a source's error text, a peer's
	// address) to callers that did not sign their request. Off by
	// default: a Function URL may be reachable by anyone (see
	// protocol.ServerOptions.HideErrors).
	ShowErrors bool
}

// NewNode builds a node from cfg: the registry, the peers, the groups (by
// calling setup) and the Handler. Start calls it; tests and custom entry
// points can call it directly. opts may be nil. A Config.Mode or URLAuth
// it does not know is an error wrapping cache.ErrConfig ("" means ModeBuffered
// and AuthNone).
//
// Without Options.Invoke.Client, NewNode makes the Lambda API client with
// NewInvokeAPI (credentials and region from the environment).
func NewNode(cfg Config, setup Setup, opts *Options) (*Node, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Peers.Secret != nil || o.Peers.MaxValueBytes != 0 || o.Peers.UnsignedWrites {
		return nil, fmt.Errorf("geecache: %w: Options.Peers.Secret, MaxValueBytes and UnsignedWrites come from the Config", cache.ErrConfig)
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if limit := cfg.valueCap(); cfg.MaxValueBytes <= 0 || cfg.MaxValueBytes > limit {
		cfg.MaxValueBytes = limit
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	po := o.Peers
	po.Secret, po.MaxValueBytes, po.Logger = cfg.Secret, cfg.MaxValueBytes, o.Logger
	po.HideErrors = !o.ShowErrors
	inv := o.Invoke
	if inv.Qualifier == "" {
		inv.Qualifier = cfg.Qualifier
	}
	if inv.Resolve == nil && len(cfg.Endpoints) > 0 {
		eps := cfg.Endpoints
		inv.Resolve = func(name string) (string, string) {
			if ep, ok := eps[name]; ok {
				return "function", ep // the emulator's one function
			}
			return "", ""
		}
	}
	var sig *SigV4Transport
	if cfg.URLAuth == AuthIAM {
		var err error
		if sig, err = NewSigV4Transport(&SigV4Options{Base: po.Transport}); err != nil {
			return nil, err
		}
		po.Transport = sig
	}
	reg := cache.NewRegistry()
	pool, err := NewPeers(cfg.SelfURL, &PeersOptions{Pool: po, Invoke: inv})
	if err != nil {
		return nil, err
	}
	if err := pool.Set(cfg.Peers...); err != nil {
		return nil, err
	}
	// Without a secret, writes are refused unless the user asked for them
	// unsigned (Config.UnsignedWrites), as where IAM authenticates every
	// caller before the function runs.
	srv, err := protocol.NewServer(reg, &protocol.ServerOptions{Secret: cfg.Secret, Self: cfg.SelfURL, MaxValueBytes: cfg.MaxValueBytes,
		MaxSkew: po.MaxSkew, HideErrors: po.HideErrors, Logger: o.Logger, Propagator: po.Propagator, UnsignedWrites: cfg.UnsignedWrites})
	if err != nil {
		return nil, err
	}
	if setup == nil {
		return nil, fmt.Errorf("geecache: %w: nil Setup", cache.ErrConfig)
	}
	if err := setup(cfg, reg, pool); err != nil {
		return nil, fmt.Errorf("geecache: lambda node setup: %w", err)
	}
	h, err := NewHandler(srv, &HandlerOptions{BasePath: cfg.BasePath})
	if err != nil {
		return nil, err
	}
	return &Node{Config: cfg, Registry: reg, Peers: pool, Handler: h, sig: sig}, nil
}

// Close closes the idle connections to the node's peers.
func (n *Node) Close() {
	_ = n.Peers.Close()
	if n.sig != nil {
		n.sig.CloseIdleConnections()
	}
}

// Start runs a GeeCache node as a Lambda function, in a few lines of main:
//
//	err := lambda.Start(ctx, func(cfg lambda.Config, reg *cache.Registry, peers cache.PeerPicker) error {
//		_, err := reg.NewGroup("scores", cfg.CacheBytes, db, &cache.GroupOptions{Peers: peers})
//		return err
//	}, nil)
//
// It reads the Config from the environment (see the package doc), builds
// the node with NewNode, and hands the Handler to the Lambda runtime loop,
// serving Handler.ServeURL, or Handler.ServeStream when
// GEECACHE_INVOKE_MODE is RESPONSE_STREAM. ctx is the base context of every
// invocation.
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
		slog.String("self", cfg.SelfURL), slog.Any("peers", n.Peers.Peers()), slog.String("mode", cfg.Mode),
		slog.Bool("auth", cfg.Secret != nil), slog.Bool("unsignedWrites", cfg.Secret == nil && cfg.UnsignedWrites),
		slog.Int64("cacheBytes", cfg.CacheBytes))
	if cfg.Mode == ModeStream {
		awslambda.StartWithOptions(n.Handler.ServeStream, awslambda.WithContext(ctx))
	} else {
		awslambda.StartWithOptions(n.Handler.ServeURL, awslambda.WithContext(ctx))
	}
	return nil // not reached: the runtime loop does not return
}
