//go:build !js

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// defaultPeers are the tutorial's three nodes, on loopback.
const defaultPeers = "http://127.0.0.1:8001,http://127.0.0.1:8002,http://127.0.0.1:8003"

// config is what the command line asks for.
type config struct {
	port    int      // 0: run every node
	peers   []string // base URLs of all nodes
	api     string   // listen address of the API, "" for none
	delay   time.Duration
	secret  string
	verbose bool
	ttl     time.Duration
	file    string        // -peers-file: the demo's discovery
	drain   time.Duration // -drain
	snaps   string        // -snapshot-dir
}

// parseFlags reads the command line (see the package doc).
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	var peers string
	api := "\x00unset"
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.port, "port", 0, "run only the node on this port (one of -peers); 0 runs them all")
	fs.StringVar(&peers, "peers", defaultPeers, "comma-separated base URLs of all nodes")
	fs.StringVar(&api, "api", api, "serve the API on this address (default 127.0.0.1:9999 without -port)")
	fs.DurationVar(&c.delay, "delay", 300*time.Millisecond, "time a lookup in the slow database takes")
	fs.DurationVar(&c.ttl, "ttl", 0, "how long a score stays fresh (0: until evicted or deleted)")
	var secretFile string
	fs.StringVar(&secretFile, "secret-file", "", "read the shared peer secret from this file (default: $"+envSecret+"; neither: unsigned peers, for loopback only)")
	fs.BoolVar(&c.verbose, "v", false, "debug logs")
	fs.StringVar(&c.file, "peers-file", "", "discovery: the nodes now in the cluster, one URL a line, re-read every second; a node adds itself, and on SIGTERM removes itself and drains before it exits")
	fs.DurationVar(&c.drain, "drain", 5*time.Second, "with -peers-file: how long a stopping node keeps serving its keys' new owners")
	fs.StringVar(&c.snaps, "snapshot-dir", "", "keep each node's memory across a restart in place: write it to this directory on exit, read it back on start")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if c.secret, err = readSecret(secretFile); err != nil {
		return c, err
	}
	for p := range strings.SplitSeq(peers, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, err := listenAddr(p); err != nil {
			return c, err
		}
		c.peers = append(c.peers, p)
	}
	if len(c.peers) == 0 {
		return c, errors.New("-peers is empty")
	}
	switch {
	case api != "\x00unset":
		c.api = api
	case c.port == 0:
		c.api = "127.0.0.1:9999"
	}
	if c.port != 0 && c.self() == "" {
		return c, fmt.Errorf("-port=%d is not the port of any of -peers %q", c.port, c.peers)
	}
	return c, nil
}

// envSecret names the environment variable that may hold the shared peer
// secret. The secret is never a flag: a flag's value shows in ps, and its
// default in -h.
const envSecret = "GEECACHE_SECRET"

// readSecret returns the shared peer secret: the content of the file at
// path (without a trailing newline) if path is set, else $GEECACHE_SECRET,
// else "" (unsigned). Setting both is an error, so that neither is
// ignored unnoticed; no error names the secret itself.
func readSecret(path string) (string, error) {
	env := os.Getenv(envSecret)
	if path == "" {
		return env, nil
	}
	if env != "" {
		return "", fmt.Errorf("both -secret-file and $%s are set; use one", envSecret)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("-secret-file: %w", err)
	}
	secret := strings.TrimRight(string(b), "\r\n")
	if secret == "" {
		return "", fmt.Errorf("-secret-file %q is empty", path)
	}
	return secret, nil
}

// self returns the peer URL of the node on c.port, or "".
func (c config) self() string {
	for _, p := range c.peers {
		if a, _ := listenAddr(p); strings.HasSuffix(a, ":"+strconv.Itoa(c.port)) {
			return p
		}
	}
	return ""
}

// listenAddr returns the host:port a node with base URL peer listens on.
func listenAddr(peer string) (string, error) {
	u, err := url.Parse(peer)
	if err != nil || u.Scheme != "http" || u.Port() == "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("peer %q: want http://HOST:PORT", peer)
	}
	return u.Host, nil
}

// run runs the nodes and API the command line asks for until ctx ends.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	if err := checkHost(runtime.GOOS); err != nil {
		return err
	}
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if c.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	mine := c.peers
	if c.port != 0 {
		mine = []string{c.self()}
	}
	lns := map[string]net.Listener{}
	closeAll := func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}
	for _, p := range mine {
		addr, _ := listenAddr(p)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			closeAll()
			return err
		}
		lns[p] = ln
	}
	var apiLn net.Listener
	if c.api != "" {
		if apiLn, err = net.Listen("tcp", c.api); err != nil {
			closeAll()
			return err
		}
	}
	o := options{peers: c.peers, db: newSlowDB(scores(), c.delay, log), secret: []byte(c.secret), log: log, ttl: c.ttl, snapshots: c.snaps}
	var pf *peersFile
	if c.file != "" {
		pf = &peersFile{path: c.file}
		if err = pf.update(mine, nil); err == nil {
			o.ring, err = pf.read()
		}
		o.drain = c.drain
		if err != nil {
			closeAll()
			if apiLn != nil {
				_ = apiLn.Close()
			}
			return fmt.Errorf("-peers-file: %w", err)
		}
	}
	cl, err := startCluster(o, lns, apiLn, mine[len(mine)-1])
	if err != nil {
		closeAll()
		if apiLn != nil {
			_ = apiLn.Close()
		}
		return err
	}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if pf != nil {
			pf.watch(wctx, cl)
		}
	}()
	werr := cl.wait(ctx)
	stopWatch()
	<-watched
	var lerr error
	if pf != nil {
		// Leave the discovery first, then drain: the other nodes drop this
		// one within a second and take its keys from its memory.
		dctx, cancel := context.WithTimeout(context.Background(), c.drain+5*time.Second)
		lerr = cl.leave(dctx, pf)
		cancel()
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(werr, lerr, cl.shutdown(sctx))
}
