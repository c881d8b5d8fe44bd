package nethttp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/geecache/geecache/cache"
)

// defaultDrainFor is PoolOptions.DrainFor when it is 0.
const defaultDrainFor = 10 * time.Second

// Drain is the first step of a node's graceful stop; it does not stop
// the node. It keeps the node serving for PoolOptions.DrainFor (10 s by
// default), or until ctx ends, and meanwhile hands the node's keys to
// their new owners; then shut the Server down (Server.Shutdown, which
// finishes the requests in flight). To stop a node at once, without a
// drain, close its Server and its Pool (Server.Close, Pool.Close), or
// the Node (Node.Close); Node.Drain runs the whole graceful stop.
//
// The node should leave its discovery first, so that the other nodes
// drop it from their rings (in Kubernetes the pod is Terminating as soon
// as it is asked to stop; with a static list, Set it without this node on
// every other one). Drain then makes this node's own groups treat it as
// gone (a key it owns is fetched from the next node on the ring, which
// owns it now) and keeps serving, so that the keys' new owners can ask it
// for what it holds (from memory only) instead of loading them from the
// source, and the requests of nodes that have not dropped it yet are
// still answered. In the first part of the drain (offerShare of it) it
// also offers its keys: each key of its groups' main caches, the most
// used first, to the key's owner without this node, which takes it from
// this node's memory (adapters/PROTOCOL.md, "Offer"), so that the keys nobody asks for during the drain are warm
// there too, and come back to this node from there when it restarts. It
// returns when the drain ends, or with an error wrapping ctx's when ctx
// ends first, and leaves the Pool usable. At the drain's end the peers'
// multiplexed connections (PoolOptions.Multiplex) go away as at Close,
// and the node takes no new one: its peers ask it over HTTP/1.1, whose
// requests in flight the Server's Shutdown waits for.
func (p *Pool) Drain(ctx context.Context) error {
	p.leaving.Store(true)
	p.log.LogAttrs(ctx, slog.LevelInfo, "geecache: leaving, draining", slog.String("self", p.Self()), slog.Duration("for", p.drainFor))
	t := time.NewTimer(p.drainFor)
	defer t.Stop()
	hctx, cancel := context.WithTimeout(ctx, p.drainFor*offerShare/100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.offerKeys(hctx)
	}()
	defer func() {
		cancel()
		<-done // it ends with hctx: every request it sends does
	}()
	select {
	case <-t.C:
		p.leaveConns()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("geecache: drain of %s cut short: %w", p.Self(), ctx.Err())
	}
}

// offerShare is the percentage of the drain a leaving node spends
// offering its keys; the rest serves the requests of nodes that are still
// catching up.
const offerShare = 80

// pickLeaving is PickPeer for a node that is leaving: a key it owns is
// fetched from the next node on the ring, its owner once this node is
// gone.
func (p *Pool) pickLeaving(key string) (cache.Peer, bool) {
	if next, _, _ := p.PickFallback(key, nil); next != nil {
		return next, true
	}
	return nil, false
}
