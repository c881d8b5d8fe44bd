//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"syscall/js"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/wasmjs"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// EnvSecret names the environment variable holding the cluster's shared
// peer secret (empty: authentication off). Every node needs the same one.
const EnvSecret = "GEECACHE_SECRET"

// maxValueBytes is the largest value the node sends or stores (its
// Cluster's MaxValueBytes): the hosts read at most one byte more of a
// peer's PUT (batch.mjs).
const maxValueBytes = 64 << 20

// main starts the node, hands the host its functions (see export) and
// runs until the host calls stop.
func main() {
	fs := flag.NewFlagSet("wasm", flag.ContinueOnError)
	self := fs.String("self", "", "this node's base URL, as its peers reach it (the shim sets it); empty: a client that owns no keys")
	peers := fs.String("peers", "", "comma-separated base URLs of the other nodes")
	delay := fs.Duration("delay", 0, "how long the slow database takes per lookup")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("node", *self)
	n, err := newNode(*self, splitPeers(*self, *peers), []byte(os.Getenv(EnvSecret)), *delay, log)
	if err != nil {
		log.Error("starting the node", "err", err)
		os.Exit(1)
	}
	stop := make(chan struct{})
	release := n.export(stop)
	log.Info("geecache wasm node is ready", "peers", n.pool.Addrs())
	<-stop
	release()
	log.Info("geecache wasm node stopped")
}

// splitPeers returns self (unless empty) and the nodes of list.
func splitPeers(self, list string) []string {
	var peers []string
	if self != "" {
		peers = append(peers, self)
	}
	for p := range strings.SplitSeq(list, ",") {
		if p = strings.TrimSpace(p); p != "" && p != self {
			peers = append(peers, p)
		}
	}
	return peers
}

// node is the wasm node: its group and its pool (the peer picker, whose
// default transport under js is the host's fetch, and the handler the
// host's HTTP server calls through wasmjs).
type node struct {
	self   string
	signed bool // it has a peer secret
	db     *slowDB
	group  *cache.Group
	echo   *cache.Group // echoGroup, for the hosts' key round-trip tests (its keys asked of the other nodes)
	pool   *nethttp.Pool
}

// newNode builds the node. The peer secret and every protocol option are
// set here, the one place the node's protocol is configured.
func newNode(self string, peers []string, secret []byte, delay time.Duration, log *slog.Logger) (*node, error) {
	reg := cache.NewRegistry()
	pool, err := nethttp.NewPool(self, reg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: secret, MaxValueBytes: maxValueBytes}, Logger: log})
	if err != nil {
		return nil, err
	}
	if err := pool.Set(peers...); err != nil {
		return nil, err
	}
	db := newSlowDB(dataset(), delay, slog.New(slog.DiscardHandler))
	g, err := reg.NewGroup(groupName, cacheBytes, db.Getter(self), &cache.GroupOptions{Peers: pool, Logger: log,
		PeerPolicy: cache.PeerPolicy{NoHedge: true}}) // the demo shows each key loaded on its owner only
	if err != nil {
		return nil, err
	}
	// The group echo, for the tests of every host, asks the other nodes
	// for each key (a ring without self), so that every key asked of this
	// node crosses the host's fetch(); it serves its peers as usual.
	others, err := nethttp.NewPool("", cache.NewRegistry(), &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: secret, MaxValueBytes: maxValueBytes}, Logger: log})
	if err != nil {
		return nil, err
	}
	if err := others.Set(slices.DeleteFunc(slices.Clone(peers), func(p string) bool { return p == self })...); err != nil {
		return nil, err
	}
	echo, err := reg.NewGroup(echoGroup, cacheBytes, getter.Func(echoLoad), &cache.GroupOptions{Peers: others, Logger: log,
		PeerPolicy: cache.PeerPolicy{NoHedge: true}})
	if err != nil {
		return nil, err
	}
	return &node{self: self, signed: len(secret) > 0, db: db, group: g, echo: echo, pool: pool}, nil
}

// export calls globalThis.geecacheReady(node) with the node's functions:
//
//	serve(method, path, headers[, signal]) → Promise<{status, headers, body}>  (the peer protocol, package wasmjs;
//	                                           also serve(batch, signals, bodies), as batch.mjs calls it)
//	maxValueBytes  the largest value the node stores (a host reads at most one byte more of a PUT)
//	signed         whether the node has a peer secret (it refuses every unsigned peer request)
//	get(key[, group]) → Promise<{status, body}>  (the API: 200 value, 404 "KEY not exist", 500 error;
//	                                           group "scores", the default, or "echo")
//	getMany(keys[, group]) → Promise<[{status, body}, ...]>  (Group.GetMany: the answers to keys, an
//	                                           array of strings, in order, each as get answers it)
//	stats() → Promise<string>  (JSON: the group's Stats and the database's lookups per key)
//	stop()  ends the program
//
// It returns the function that releases them.
func (n *node) export(stop chan struct{}) (release func()) {
	serve := wasmjs.Func(n.pool)
	get := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) < 1 || args[0].Type() != js.TypeString {
			return js.Global().Get("Promise").Call("reject", js.Global().Get("TypeError").New("get(key): key must be a string"))
		}
		key, g := args[0].String(), n.group
		if len(args) > 1 && args[1].Type() == js.TypeString && args[1].String() == echoGroup {
			g = n.echo
		}
		return goPromise(func() any { return n.get(g, key) })
	})
	getMany := js.FuncOf(func(_ js.Value, args []js.Value) any {
		keys, ok := stringsOf(args)
		if !ok {
			return js.Global().Get("Promise").Call("reject", js.Global().Get("TypeError").New("getMany(keys): keys must be an array of strings"))
		}
		g := n.group
		if len(args) > 1 && args[1].Type() == js.TypeString && args[1].String() == echoGroup {
			g = n.echo
		}
		return goPromise(func() any { return n.getMany(g, keys) })
	})
	stats := js.FuncOf(func(js.Value, []js.Value) any {
		return goPromise(func() any { return n.statsJSON() })
	})
	var stopped bool
	stopFn := js.FuncOf(func(js.Value, []js.Value) any {
		if !stopped {
			stopped = true
			close(stop)
		}
		return nil
	})
	obj := js.Global().Get("Object").New()
	obj.Set("self", n.self)
	obj.Set("maxValueBytes", maxValueBytes)
	obj.Set("signed", n.signed)
	obj.Set("serve", serve)
	obj.Set("get", get)
	obj.Set("getMany", getMany)
	obj.Set("stats", stats)
	obj.Set("stop", stopFn)
	if ready := js.Global().Get("geecacheReady"); ready.Type() == js.TypeFunction {
		ready.Invoke(obj)
	}
	return func() {
		for _, f := range []js.Func{serve, get, getMany, stats, stopFn} {
			f.Release()
		}
	}
}

// get answers the API's request for key in g.
func (n *node) get(g *cache.Group, key string) any {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := g.Get(ctx, key)
	return answer(key, v, err)
}

// getMany answers the API's request for keys in g, with one GetMany.
func (n *node) getMany(g *cache.Group, keys []string) any {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := make([]any, len(keys))
	g.GetMany(ctx, keys, func(i int, v cache.ByteView, err error) { out[i] = answer(keys[i], v, err) })
	return out
}

// answer is the API's answer for key: its value v, or err.
func answer(key string, v cache.ByteView, err error) map[string]any {
	switch {
	case errors.Is(err, getter.ErrNotFound):
		return map[string]any{"status": 404, "body": key + " not exist"}
	case err != nil:
		return map[string]any{"status": 500, "body": err.Error()}
	}
	return map[string]any{"status": 200, "body": v.String()}
}

// stringsOf returns args[0], an array of strings, as a slice.
func stringsOf(args []js.Value) ([]string, bool) {
	if len(args) < 1 || !args[0].InstanceOf(js.Global().Get("Array")) {
		return nil, false
	}
	keys := make([]string, args[0].Length())
	for i := range keys {
		k := args[0].Index(i)
		if k.Type() != js.TypeString {
			return nil, false
		}
		keys[i] = k.String()
	}
	return keys, true
}

func (n *node) statsJSON() any {
	r := statsReport{Self: n.self, Stats: n.group.Stats(), Lookups: map[string]int{}}
	for k := range dataset() {
		if c := n.db.Lookups(k); c > 0 {
			r.Lookups[k] = c
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf(`{"error":%q}`, err.Error())
	}
	return string(b)
}

// goPromise returns a Promise that f's result (a value js.ValueOf
// accepts) resolves. f runs in a goroutine: a callback from JavaScript
// must never block.
func goPromise(f func() any) js.Value {
	var resolve js.Value
	executor := js.FuncOf(func(_ js.Value, a []js.Value) any {
		resolve = a[0]
		return nil
	})
	p := js.Global().Get("Promise").New(executor)
	executor.Release()
	go func() { resolve.Invoke(f()) }()
	return p
}
