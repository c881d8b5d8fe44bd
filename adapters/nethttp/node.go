//go:build !js

package nethttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/geecache/geecache/cache"
)

// NodeOptions configures a Node (Listen): the URL its peers reach it at,
// if it is not the address it listens on, and the options of its Pool and
// of its Server. As everywhere in GeeCache, nil means all defaults and a
// zero field its documented default.
//
// Listen takes a struct of its own rather than a PoolOptions, so that a
// node that listens on every interface (":8001", as a node in a container
// does) can say which address its peers use (Self), and so that the
// Server's options are there too.
type NodeOptions struct {
	// Self is the node's URL as its peers reach it and list it, such as
	// "http://10.0.0.1:8001" or "http://cache-1.internal:8001" (see
	// NewPool). "" means "http://" and the address the listener got:
	// "127.0.0.1:0" gives "http://127.0.0.1:" and the port the OS picked.
	// An address with no host or an unspecified one (":8001",
	// "0.0.0.0:8001", "[::]:8001") listens on every interface, and does
	// not say which one the peers use: Listen fails for it unless Self is
	// set.
	Self string

	// Pool configures the node's Pool, as for NewPool.
	Pool PoolOptions

	// Server configures the node's Server, as for NewServer.
	Server ServerOptions
}

// A Node is a Pool served on a listener of its own by a Server (NewServer),
// all three made by Listen, which knows the node's URL once it has
// listened. Give its Pool to the node's groups (cache.GroupOptions.Peers)
// and set the Pool's peer list (Pool().Set, or a discovery such as
// dns.Watch). Stop it with Close (at once) or Drain (gracefully).
type Node struct {
	pool     *Pool
	srv      *Server
	served   chan struct{} // closed when Serve has returned
	serveErr error         // why Serve returned, if not for Close or Shutdown
}

// Listen starts a node in one call: it listens on the TCP address addr
// (such as "10.0.0.1:8001", or "127.0.0.1:0" for a port the OS picks),
// builds the node's Pool for the registry reg with the URL
// "http://"+the listener's address as its self (or NodeOptions.Self), and
// serves it with a Server from NewServer, on a goroutine of its own, until
// Close or Drain. opts may be nil. The node serves at once: make its
// groups next (a peer that asks for a group not made yet is answered
// "unknown group" and loads the key itself). Until its peer list is set,
// the node owns every key.
//
// Listen serves the Pool alone, over plain HTTP. To serve it beside
// routes of your own on one port, over TLS, or only after something else
// (a snapshot restored with Group.Restore), use NewPool and NewServer: the
// package doc shows how. Listen fails, with an error wrapping
// cache.ErrConfig, for options that cannot work, an addr that listens on
// every interface without NodeOptions.Self, and under GOOS=wasip1 (no
// sockets: the host serves the node); otherwise with the listener's error.
func Listen(addr string, reg *cache.Registry, opts *NodeOptions) (*Node, error) {
	var o NodeOptions
	if opts != nil {
		o = *opts
	}
	if err := checkListen(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("geecache: %w", err)
	}
	self := o.Self
	if self == "" {
		if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
			return nil, errors.Join(fmt.Errorf("geecache: %w: %q listens on every interface, so the node cannot tell its own URL: listen on the address the peers use, or set NodeOptions.Self", cache.ErrConfig, addr), ln.Close())
		}
		self = "http://" + ln.Addr().String()
	}
	pool, err := NewPool(self, reg, &o.Pool)
	if err != nil {
		return nil, errors.Join(err, ln.Close())
	}
	n := &Node{pool: pool, srv: NewServer(ln.Addr().String(), pool, &o.Server), served: make(chan struct{})}
	pool.log.LogAttrs(context.Background(), slog.LevelInfo, "geecache: node serving",
		slog.String("self", pool.Self()), slog.String("listen", ln.Addr().String()))
	go func() {
		defer close(n.served)
		if err := n.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			n.serveErr = fmt.Errorf("geecache: node %s stopped serving: %w", pool.Self(), err)
			pool.log.LogAttrs(context.Background(), slog.LevelError, "geecache: node stopped serving",
				slog.String("self", pool.Self()), slog.Any("err", err))
		}
	}()
	return n, nil
}

// Pool returns the node's Pool: give it to the node's groups as
// cache.GroupOptions.Peers, and set its peer list with its Set.
func (n *Node) Pool() *Pool { return n.pool }

// URL returns the node's own URL, normalised, as its peers must list it
// (the Pool's Self).
func (n *Node) URL() string { return n.pool.Self() }

// Close stops the node at once, without a drain, whatever
// PoolOptions.DrainFor is: it closes the Server (Server.Close: the
// requests in flight are cut, and their callers load the keys elsewhere)
// and the Pool (Pool.Close), and returns once the Server has stopped
// serving. It returns the error that stopped the Server before, if one
// did. Use it at the end of a test, or of a program whose peers need
// nothing from it; Drain stops a node gracefully.
func (n *Node) Close() error {
	var errs []error
	if err := n.srv.Close(); err != nil {
		errs = append(errs, fmt.Errorf("geecache: closing node %s: %w", n.URL(), err))
	}
	<-n.served
	return errors.Join(append(errs, n.pool.Close(), n.serveErr)...)
}

// Drain stops the node gracefully, once it has left its discovery (the
// other nodes have dropped it from their rings, or are about to): it
// drains the Pool (Pool.Drain: the node keeps serving for
// PoolOptions.DrainFor, 10 s by default, and hands its keys to their new
// owners), then shuts the Server down (Server.Shutdown: the requests in
// flight are answered), then closes the node as Close does. If ctx ends
// first, the node stops at once then, and the error wraps ctx's. Either
// way the node has stopped when Drain returns.
func (n *Node) Drain(ctx context.Context) error {
	if err := n.pool.Drain(ctx); err != nil {
		return errors.Join(err, n.Close())
	}
	if err := n.srv.Shutdown(ctx); err != nil {
		return errors.Join(fmt.Errorf("geecache: shutdown of %s cut short: %w", n.URL(), err), n.Close())
	}
	return n.Close()
}
