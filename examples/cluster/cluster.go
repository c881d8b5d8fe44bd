//go:build !js

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// groupName and cacheBytes are the tutorial's group.
const (
	groupName  = "scores"
	cacheBytes = 2 << 10
)

// options configure the nodes a process runs.
type options struct {
	peers  []string // base URLs of every node of the cluster
	db     *slowDB
	secret []byte // shared peer secret; empty: authentication off
	log    *slog.Logger
	ttl    time.Duration // how long a score stays fresh; 0: no expiry
	ring   []string      // the nodes' first peer list; nil: peers
	drain  time.Duration // how long a node asked to stop serves its keys' new owners; 0: the Pool's default
	// snapshots, if set, is the directory where each node keeps its
	// memory across a restart in place (snapshot.go).
	snapshots string
}

// node is one cache node: its pool (peer handler and picker), its group and
// its HTTP server.
type node struct {
	addr  string
	pool  *nethttp.Pool
	group *cache.Group
	srv   *nethttp.Server
}

// cluster is what one process runs: some cache nodes and perhaps the API
// front end.
type cluster struct {
	nodes     []*node
	snapshots string // options.snapshots
	api       *nethttp.Server
	log       *slog.Logger
	errc      chan error // a server that stopped on its own
	n         int        // servers started
}

// startCluster starts a cache node on each listener (lns[addr], keyed by
// the node's base URL from o.peers) and, if apiLn is not nil, the API front
// end on apiLn, answering from the group of the node apiNode.
func startCluster(o options, lns map[string]net.Listener, apiLn net.Listener, apiNode string) (*cluster, error) {
	c := &cluster{log: o.log, errc: make(chan error, len(lns)+1), snapshots: o.snapshots}
	var apiGroup *node
	for _, addr := range o.peers {
		ln, ok := lns[addr]
		if !ok {
			continue
		}
		reg := cache.NewRegistry()
		log := o.log.With("node", addr)
		// Without a secret the demo's nodes take each other's DELETEs
		// unsigned: fine on loopback, not on a network others can reach.
		pool, err := nethttp.NewPool(addr, reg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: o.secret}, Logger: log,
			UnsignedWrites: len(o.secret) == 0, DrainFor: o.drain})
		if err == nil {
			ring := o.ring
			if ring == nil {
				ring = o.peers
			}
			err = pool.Set(ring...)
		}
		if err != nil {
			return nil, errors.Join(err, c.shutdown(context.Background()))
		}
		g, err := reg.NewGroup(groupName, cacheBytes, o.db.Getter(addr), &cache.GroupOptions{Peers: pool, Logger: log, TTL: o.ttl})
		if err != nil {
			return nil, errors.Join(err, c.shutdown(context.Background()))
		}
		if o.snapshots != "" { // its peers are set; it serves after
			restoreSnapshot(context.Background(), g, snapshotPath(o.snapshots, addr), log)
		}
		n := &node{addr: addr, pool: pool, group: g, srv: nethttp.NewServer("", pool, nil)}
		c.nodes = append(c.nodes, n)
		c.serve(n.srv, ln)
		o.log.Info("geecache is running", "node", addr, "listen", ln.Addr().String())
		if addr == apiNode {
			apiGroup = n
		}
	}
	if len(c.nodes) != len(lns) {
		return nil, errors.Join(fmt.Errorf("a listener is not for any of the peers %q", o.peers), c.shutdown(context.Background()))
	}
	if apiLn != nil {
		if apiGroup == nil {
			return nil, errors.Join(fmt.Errorf("the API needs a node in this process, %q is not one", apiNode), c.shutdown(context.Background()))
		}
		c.api = nethttp.NewServer("", apiHandler(apiGroup, o.log), nil)
		c.serve(c.api, apiLn)
		o.log.Info("frontend server is running", "api", "http://"+apiLn.Addr().String()+"/api?key=Tom", "node", apiGroup.addr)
	}
	return c, nil
}

func (c *cluster) serve(srv *nethttp.Server, ln net.Listener) {
	c.n++
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			c.errc <- fmt.Errorf("server on %s: %w", ln.Addr(), err)
			return
		}
		c.errc <- nil
	}()
}

// wait blocks until ctx ends (a signal) or a server fails.
func (c *cluster) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-c.errc:
		c.n--
		return err
	}
}

// shutdown stops the API front end, then the nodes, letting requests in
// flight finish until ctx ends, and waits for every server to return.
// With snapshots, each node writes its snapshot once its server is down,
// when nothing can change its memory any more.
func (c *cluster) shutdown(ctx context.Context) error {
	var errs []error
	if c.api != nil {
		errs = append(errs, c.api.Shutdown(ctx))
	}
	for _, n := range c.nodes {
		errs = append(errs, n.srv.Shutdown(ctx))
		if c.snapshots != "" {
			if err := saveSnapshot(ctx, n.group, snapshotPath(c.snapshots, n.addr), c.log); err != nil {
				errs = append(errs, fmt.Errorf("snapshot of %s: %w", n.addr, err))
			}
		}
		errs = append(errs, n.pool.Close())
	}
	for ; c.n > 0; c.n-- {
		errs = append(errs, <-c.errc)
	}
	c.log.Info("cluster stopped")
	return errors.Join(errs...)
}

// apiHandler is the user-facing front end: GET /api?key=K answers K's
// score from g's cluster: 200 with the value, 404 "K not exist", 400 for a
// missing key or a malformed query; DELETE /api?key=K removes K from every node of the cluster
// (the next GET loads it anew, once, on its owner). Each answer is a line
// of text. GET /api?key=K1&key=K2… answers many keys at once (see
// serveMany).
func apiHandler(n *node, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("DELETE /api", func(w http.ResponseWriter, r *http.Request) {
		q, ok := apiQuery(w, r)
		if !ok {
			return
		}
		key := q.Get("key")
		if key == "" {
			http.Error(w, "missing key parameter: use /api?key=NAME", http.StatusBadRequest)
			return
		}
		log.Info("api delete", "key", logKey(key), "owner", n.pool.Owner(key), "via", n.addr)
		if err := n.group.Remove(r.Context(), key); err != nil {
			// The nodes the error names did not confirm: they may serve
			// the old value until the group's retries reach them or it
			// expires.
			log.Warn("api delete not confirmed everywhere", "key", logKey(key), "err", logErr(err, key))
			http.Error(w, "removed; some nodes did not confirm (they may serve the old value until retried or expired)", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, key+" removed\n")
	})
	mux.HandleFunc("GET /api", func(w http.ResponseWriter, r *http.Request) {
		q, ok := apiQuery(w, r)
		if !ok {
			return
		}
		if keys := q["key"]; len(keys) > 1 {
			serveMany(w, r, n, keys, log) // /api?key=Tom&key=Jack&key=Sam
			return
		}
		key := q.Get("key")
		if key == "" {
			http.Error(w, "missing key parameter: use /api?key=NAME", http.StatusBadRequest)
			return
		}
		log.Info("api request", "key", logKey(key), "owner", n.pool.Owner(key), "via", n.addr)
		v, err := n.group.Get(r.Context(), key)
		switch {
		case errors.Is(err, getter.ErrNotFound):
			http.Error(w, key+" not exist", http.StatusNotFound)
			return
		case err != nil:
			log.Warn("api request failed", "key", logKey(key), "err", logErr(err, key))
			http.Error(w, "the score could not be loaded", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = v.WriteTo(w)
		_, _ = io.WriteString(w, "\n")
	})
	return mux
}

// apiQuery returns r's query, or answers 400 "malformed query" with the
// fault and returns false if it does not parse: a bad escape (?key=%zz),
// a lone % (?key=100%, where %25 is meant) or a semicolon. (r.URL.Query
// would drop the pair it cannot parse, and the key with it.)
func apiQuery(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		http.Error(w, "malformed query: "+err.Error()+" (a % in a key is written %25)", http.StatusBadRequest)
		return nil, false
	}
	return q, true
}
