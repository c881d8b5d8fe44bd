//go:build !js

// Command lambda is a GeeCache node that runs as an AWS Lambda function
// behind a Function URL: the tutorial's "scores" group (Tom 630, Jack 589,
// Sam 567, from a slow database) and a "blobs" group with a binary value.
//
// It is configured from the environment (GEECACHE_PEERS, the function
// names of every node, and optional settings; see package
// adapters/lambda). Peers named by function reach each other through the
// Lambda Invoke API with the function's role. README.md has the one-step
// deploy of template.yaml (three nodes) and how to run them locally.
package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/cache"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	err := lambda.Start(context.Background(), func(cfg lambda.Config, reg *cache.Registry, peers cache.PeerPicker) error {
		return addGroups(reg, cfg, peers, log)
	}, &lambda.Options{Logger: log})
	log.Error("geecache: lambda node did not start", "err", err)
	os.Exit(1)
}

// nodeName is how the node's logs name it: its name on the ring (its
// function name, or its Function URL), with the version or alias its peers
// invoke (GEECACHE_QUALIFIER) if it has none of its own.
func nodeName(cfg lambda.Config) string {
	self := cfg.SelfURL
	if cfg.Qualifier == "" || strings.Contains(self, "://") { // none, or a URL
		return self
	}
	unqualified := 1 // name
	if strings.HasPrefix(self, "arn:") {
		unqualified = 7 // arn:aws:lambda:region:account:function:name
	}
	if strings.Count(self, ":")+1 > unqualified {
		return self
	}
	return self + ":" + cfg.Qualifier
}

// addGroups adds the node's groups to reg, each of cfg.CacheBytes.
func addGroups(reg *cache.Registry, cfg lambda.Config, peers cache.PeerPicker, log *slog.Logger) error {
	opts := &cache.GroupOptions{Peers: peers, Logger: log}
	node := nodeName(cfg)
	if _, err := reg.NewGroup("scores", cfg.CacheBytes, scoresDB(node, log), opts); err != nil {
		return err
	}
	_, err := reg.NewGroup("blobs", cfg.CacheBytes, blobStore(node, log), opts)
	return err
}
