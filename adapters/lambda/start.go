package lambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/picker"
)

// ErrNoRuntime is returned by Start outside a Lambda runtime (when
// AWS_LAMBDA_RUNTIME_API is not set).
var ErrNoRuntime = errors.New("geecache/lambda: not running under a Lambda runtime (AWS_LAMBDA_RUNTIME_API is not set)")

// A Setup builds a node's groups: it creates a registry, adds the groups
// with cfg.CacheBytes and cache.WithPeers(peers), and returns it. It runs
// once per execution environment, at start-up.
type Setup func(cfg Config, peers cache.PeerPicker) (*cache.Registry, error)

// A Node is a configured Lambda node: its registry, the peer picker its
// groups fetch through, and the Handler that serves its Function URL.
type Node struct {
	Config   Config
	Registry *cache.Registry
	// Peers picks the owner of a key on a consistent-hash ring over
	// Config.Peers and fetches from it with the net/http binding's Client:
	// a peer's Function URL is plain HTTPS to its callers, so Lambda and
	// net/http nodes serve each other.
	Peers     *picker.Peers
	Handler   *Handler
	transport *http.Transport // shared by the peer clients
}

// An Option configures NewNode and Start.
type Option func(*options)

type options struct {
	log   *slog.Logger
	peers []nethttp.Option
}

// WithLogger sets the logger of the node's protocol server and peer
// clients (default slog.Default(); on Lambda, stderr goes to CloudWatch).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// WithPeerOptions passes options to the net/http clients that fetch from
// peers, such as nethttp.WithTimeout, nethttp.WithBasePath or
// nethttp.WithPicker (every node must use the same ring options). The
// secret and size limit come from the Config.
func WithPeerOptions(opts ...nethttp.Option) Option {
	return func(o *options) { o.peers = append(o.peers, opts...) }
}

func newOptions(opts []Option) options {
	o := options{log: slog.Default()}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// NewNode builds a node from cfg: the peer picker, the groups (by calling
// setup) and the Handler. Start calls it; tests and custom entry points can
// call it directly.
func NewNode(cfg Config, setup Setup, opts ...Option) (*Node, error) {
	o := newOptions(opts)
	if cfg.MaxValueBytes <= 0 || cfg.MaxValueBytes > MaxValueBytes {
		cfg.MaxValueBytes = MaxValueBytes
	}
	proto := []protocol.Option{
		protocol.WithSecret(cfg.Secret),
		protocol.WithMaxValueBytes(cfg.MaxValueBytes),
		protocol.WithLogger(o.log),
	}
	n := &Node{Config: cfg, transport: nethttp.NewTransport()}
	copts := append([]nethttp.Option{
		nethttp.WithTransport(n.transport),
		nethttp.WithProtocol(proto...),
		nethttp.WithLogger(o.log),
	}, o.peers...)
	n.Peers = picker.NewPeers(cfg.SelfURL, func(addr string) cache.PeerGetter {
		return nethttp.NewClient(addr, copts...)
	})
	n.Peers.Set(cfg.Peers...)
	reg, err := setup(cfg, n.Peers)
	if err != nil {
		return nil, fmt.Errorf("geecache/lambda: setup: %w", err)
	}
	if reg == nil {
		return nil, errors.New("geecache/lambda: setup returned no registry")
	}
	n.Registry = reg
	n.Handler = NewHandler(protocol.NewServer(reg, proto...))
	return n, nil
}

// Close closes the idle connections to the node's peers.
func (n *Node) Close() {
	n.transport.CloseIdleConnections()
}

// Start runs a GeeCache node as a Lambda function, in a few lines of main:
//
//	err := lambda.Start(ctx, func(cfg lambda.Config, peers cache.PeerPicker) (*cache.Registry, error) {
//		reg := cache.NewRegistry()
//		_, err := reg.NewGroup("scores", cfg.CacheBytes, db, cache.WithPeers(peers))
//		return reg, err
//	})
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
func Start(ctx context.Context, setup Setup, opts ...Option) error {
	cfg, err := ConfigFromEnv(os.LookupEnv)
	if err != nil {
		return err
	}
	if v, _ := os.LookupEnv("AWS_LAMBDA_RUNTIME_API"); v == "" {
		return ErrNoRuntime
	}
	n, err := NewNode(cfg, setup, opts...)
	if err != nil {
		return err
	}
	newOptions(opts).log.LogAttrs(ctx, slog.LevelInfo, "geecache: lambda node starting",
		slog.String("self", cfg.SelfURL), slog.Any("peers", n.Peers.Addrs()), slog.String("mode", cfg.Mode),
		slog.Bool("auth", cfg.Secret != nil), slog.Int64("cacheBytes", cfg.CacheBytes))
	if cfg.Mode == ModeStream {
		awslambda.StartWithOptions(n.Handler.ServeStream, awslambda.WithContext(ctx))
	} else {
		awslambda.StartWithOptions(n.Handler.ServeURL, awslambda.WithContext(ctx))
	}
	return nil // not reached: the runtime loop does not return
}
