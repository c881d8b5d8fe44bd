// Command inprocess shows the core alone, without a network: three cache
// nodes live in one process, each with its own Registry, wired through an
// in-memory PeerGetter and a consistent-hash peer set. Each key is loaded
// from the slow source once, by its owner; the other nodes fetch it from
// the owner and keep it in their hot caches. "Not found" is not cached, so
// every Get of a missing key asks its owner's source again.
//
//	go run ./examples/inprocess
package main

import (
	"context"
	"errors"
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

// inMemoryPeer is a PeerGetter that calls another node in the same
// process, as a transport would over the network: the owner serves the
// request with GetLocal, so it never forwards it again, and a Remove or
// Set with RemoveLocal or SetLocal.
type inMemoryPeer struct {
	addr   string
	target *cache.Registry
}

func (p inMemoryPeer) group(name string) (*cache.Group, error) {
	if g := p.target.Lookup(name); g != nil {
		return g, nil
	}
	return nil, fmt.Errorf("no group %q on peer %s", name, p.addr)
}

// Get returns the owner's value and the time it has left, as a
// transport carries them.
func (p inMemoryPeer) Get(ctx context.Context, group, key string) ([]byte, time.Duration, error) {
	g, err := p.group(group)
	if err != nil {
		return nil, 0, err
	}
	v, ttl, err := g.GetLocal(ctx, key)
	var ce *cache.Error
	if errors.As(err, &ce) {
		return nil, ttl, ce.Err // the owner's own words, as the wire protocol carries them
	}
	if err != nil {
		return nil, 0, err
	}
	return v.ByteSlice(), ttl, nil
}

func (p inMemoryPeer) Remove(_ context.Context, group, key string) error {
	g, err := p.group(group)
	if err == nil {
		g.RemoveLocal(key)
	}
	return err
}

func (p inMemoryPeer) Set(_ context.Context, group, key string, value []byte, ttl time.Duration) error {
	g, err := p.group(group)
	if err == nil {
		g.SetLocal(key, value, ttl)
	}
	return err
}

func (p inMemoryPeer) Addr() string { return p.addr }

// Batch asks the owner for many keys at once (Group.GetMany), or drops
// them (Group.RemoveMany; no keys: Group.Purge). This in-memory peer does
// not batch: the group then asks key by key.
func (p inMemoryPeer) Batch(context.Context, string, []string, bool, func(int, []byte, time.Duration, error)) error {
	return fmt.Errorf("peer %s: %w", p.addr, errors.ErrUnsupported)
}

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
		peers, err := picker.NewPeers(n.name, func(addr string) cache.PeerGetter {
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
