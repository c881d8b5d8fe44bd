package nethttp

import (
	"log/slog"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/picker"
)

// handlerOptions configures a handler: the serving side of PoolOptions
// (whose fields document these), with the node's own normalised address.
type handlerOptions struct {
	BasePath       string
	Secret         []byte
	Self           string // required with a Secret
	MaxValueBytes  int64
	MaxSkew        time.Duration
	HideErrors     bool
	Logger         *slog.Logger
	Propagator     protocol.Propagator
	UnsignedWrites bool
	AllowOrigins   []string
}

// Cluster holds the settings every node of a cluster must share, whatever
// its binding: a Pool takes it as PoolOptions.Cluster (and so does a node
// served from JavaScript through package adapters/wasmjs), a Lambda node
// as lambda.Config.Cluster. Nodes that differ in one of them disagree on
// owners (Replicas, Hash) or refuse each other's requests (BasePath,
// Secret, MaxValueBytes). As everywhere in GeeCache, the zero value of a
// field means its default.
type Cluster struct {
	// BasePath is the escaped path prefix under which every node serves
	// the protocol and is asked for it, such as "/cache": a node answers
	// BasePath+"/_geecache/…". It must start with "/" and not end with
	// one. "" (the default) serves the protocol at the root.
	BasePath string

	// Secret turns on peer authentication: every request to a peer is
	// signed with it and every answer checked, and a request without a
	// valid, fresh signature is refused (401) before anything is loaded
	// for it. Empty (the default) leaves authentication off.
	Secret []byte

	// MaxValueBytes is the largest value sent or read; 0 means 64 MiB.
	MaxValueBytes int64

	// Replicas is how many points each node gets on the consistent-hash
	// ring (0 means 1024), and Hash places keys and points on it (nil
	// means xxHash); see picker.Options.
	Replicas int
	Hash     picker.Hash
}

func (o *PoolOptions) handler() handlerOptions {
	c := &o.Cluster
	return handlerOptions{AllowOrigins: o.AllowOrigins, UnsignedWrites: o.UnsignedWrites, BasePath: c.BasePath, Secret: c.Secret, MaxValueBytes: c.MaxValueBytes,
		MaxSkew: o.MaxSkew, HideErrors: o.HideErrors, Logger: o.Logger, Propagator: o.Propagator}
}
