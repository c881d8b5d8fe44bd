// Command inprocess shows the core alone, without a network: three cache
// nodes live in one process, each with its own Registry, wired through an
// in-memory Peer and a consistent-hash peer set. Each key is loaded
// from the slow source once, by its owner; the other nodes fetch it from
// the owner and keep it in their hot caches. "Not found" is not cached, so
// every Get of a missing key asks its owner's source again.
//
//	go run ./examples/inprocess
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/picker"
)

func main() {
	if err := run(context.Background(), os.Stdout, 100*time.Millisecond); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// node is one cache node: its registry, and the peer set its group uses.
type node struct {
	name     string
	registry *cache.Registry
	scores   *cache.Group
	peers    *picker.Peers
}

// inMemoryPeer is a Peer that calls another node in the same process, as
// a transport would over the network: the request goes to the other
// node's Registry.ServePeer, and its answers come back to reply.
type inMemoryPeer struct {
	addr   string
	target *cache.Registry
}

func (p inMemoryPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return p.target.ServePeer(ctx, req, reply)
}

func (p inMemoryPeer) Addr() string { return p.addr }

// newCluster starts nodes named names that share db as their source of
// truth.
func newCluster(names []string, db *slowDB) ([]*node, error) {
	nodes := make([]*node, len(names))
	byName := make(map[string]*cache.Registry)
	for i, name := range names {
		nodes[i] = &node{name: name, registry: cache.NewRegistry()}
		byName[name] = nodes[i].registry
	}
	quiet := slog.New(slog.DiscardHandler)
	for _, n := range nodes {
		peers, err := picker.NewPeers(n.name, func(addr string) cache.Peer {
			return inMemoryPeer{addr: addr, target: byName[addr]}
		}, &picker.Options{Logger: quiet})
		if err != nil {
			return nil, err
		}
		n.peers = peers
		if err := n.peers.Set(names...); err != nil {
			return nil, err
		}
		g, err := n.registry.NewGroup("scores", 1<<20, db.Getter(n.name), &cache.GroupOptions{Peers: n.peers, Logger: quiet})
		if err != nil {
			return nil, err
		}
		n.scores = g
	}
	return nodes, nil
}

func run(ctx context.Context, out io.Writer, delay time.Duration) error {
	// The database logs each lookup to out, without timestamps.
	dbLog := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	nodes, err := newCluster([]string{"node-a", "node-b", "node-c"}, newSlowDB(scores(), delay, dbLog))
	if err != nil {
		return err
	}
	for _, key := range []string{"Tom", "Jack", "Sam", "kkk"} {
		fmt.Fprintf(out, "%s is owned by %s\n", key, nodes[0].peers.Owner(key))
		for _, n := range nodes {
			v, err := n.scores.Get(ctx, key)
			if err != nil {
				fmt.Fprintf(out, "  %s: %s -> %v\n", n.name, key, err)
				continue
			}
			fmt.Fprintf(out, "  %s: %s = %s\n", n.name, key, v)
		}
	}
	for _, n := range nodes {
		s := n.scores.Stats()
		fmt.Fprintf(out, "%s: gets=%d local loads=%d peer loads=%d hot items=%d\n",
			n.name, s.Gets, s.LocalLoads, s.PeerLoads, s.Hot.Items)
	}
	return nil
}
