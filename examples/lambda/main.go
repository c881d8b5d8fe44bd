// Command lambda is a GeeCache node that runs as an AWS Lambda function
// behind a Function URL: the seed's "scores" group (Tom 630, Jack 589,
// Sam 567, from a slow database) and a "blobs" group with a binary value.
//
// It is configured from the environment (GEECACHE_SELF_URL, GEECACHE_PEERS,
// GEECACHE_SECRET, ...; see package adapters/lambda). README.md has the
// build command and an AWS SAM template for three nodes.
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/geecache/geecache/adapters/lambda"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/examples/internal/seeddb"
	"github.com/geecache/geecache/getter"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	err := lambda.Start(context.Background(), func(cfg lambda.Config, peers cache.PeerPicker) (*cache.Registry, error) {
		return newRegistry(cfg.CacheBytes, peers, log)
	}, lambda.WithLogger(log))
	log.Error("geecache: lambda node did not start", "err", err)
	os.Exit(1)
}

// scoresDB is the seed's slow database. Every load logs "[SlowDB] search
// key", so the cost of a miss is visible in the function's logs
// (CloudWatch, or the emulator's output locally).
func scoresDB(log *slog.Logger) getter.Getter {
	return seeddb.New(seeddb.Scores(), 20*time.Millisecond, log.With("group", "scores")).Getter("lambda")
}

// newRegistry builds the node's groups.
func newRegistry(cacheBytes int64, peers cache.PeerPicker, log *slog.Logger) (*cache.Registry, error) {
	reg := cache.NewRegistry()
	opts := []cache.Option{cache.WithPeers(peers), cache.WithLogger(log)}
	if _, err := reg.NewGroup("scores", cacheBytes, scoresDB(log), opts...); err != nil {
		return nil, err
	}
	if _, err := reg.NewGroup("blobs", cacheBytes, blobStore(log), opts...); err != nil {
		return nil, err
	}
	return reg, nil
}
