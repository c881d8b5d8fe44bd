package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/discovery/dns"
	"github.com/geecache/geecache/discovery/kubernetes"
	"github.com/geecache/geecache/getter"
	k8s "k8s.io/client-go/kubernetes"
)

const (
	discoveryDNS            = "dns"
	discoveryEndpointSlices = "endpointslices"

	groupName  = "scores"
	cacheBytes = 64 << 20

	// shutdownTimeout bounds the wait for requests in flight once the
	// drain is over; terminationGracePeriodSeconds must cover drain plus
	// this (the manifests' test checks it).
	shutdownTimeout = 5 * time.Second

	// peerPortName is the name of the Service port of the peers, which
	// the EndpointSlices carry.
	peerPortName = "http"

	// The probes' paths (the manifests' test checks the Deployment's).
	pathHealth = "/healthz"
	pathReady  = "/readyz"
)

// config is what the flags and the environment say.
type config struct {
	listen    string
	self      string
	discovery string
	service   string
	namespace string
	dnsServer string
	drain     time.Duration
	delay     time.Duration // the slow database's lookup time
	secret    []byte
}

// parseFlags reads args, with defaults from getenv.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	or := func(env, def string) string {
		if v := getenv(env); v != "" {
			return v
		}
		return def
	}
	var c config
	fs := flag.NewFlagSet("kubernetes", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.listen, "listen", ":8080", "address to serve the peers, the API and the probes on")
	fs.StringVar(&c.self, "self", "", "this node's peer URL (default http://$POD_IP:PORT of -listen)")
	fs.StringVar(&c.discovery, "discovery", or("GEECACHE_DISCOVERY", discoveryDNS), "how peers are found: dns or endpointslices")
	fs.StringVar(&c.service, "service", or("GEECACHE_SERVICE", "geecache-peers"), "the headless Service of the peers")
	fs.StringVar(&c.namespace, "namespace", getenv("POD_NAMESPACE"), "the Service's namespace (endpointslices)")
	fs.StringVar(&c.dnsServer, "dns-server", "", "the DNS server to ask, host:port (dns; default: those of /etc/resolv.conf); it is asked for SERVICE.NAMESPACE.svc.cluster.local unless -service has a dot")
	fs.DurationVar(&c.drain, "drain", 10*time.Second, "how long to keep serving after SIGTERM")
	fs.DurationVar(&c.delay, "delay", 300*time.Millisecond, "how long a lookup in the slow database takes")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	bad := func(format string, a ...any) (config, error) {
		err := fmt.Errorf(format, a...)
		fmt.Fprintln(stderr, "kubernetes:", err)
		return c, err
	}
	_, port, err := net.SplitHostPort(c.listen)
	if err != nil {
		return bad("-listen %q: %w", c.listen, err)
	}
	if c.self == "" {
		ip := getenv("POD_IP")
		if ip == "" {
			return bad("no -self and no $POD_IP (set it from status.podIP)")
		}
		c.self = "http://" + net.JoinHostPort(ip, port)
	}
	switch {
	case c.discovery != discoveryDNS && c.discovery != discoveryEndpointSlices:
		return bad("-discovery %q: want %s or %s", c.discovery, discoveryDNS, discoveryEndpointSlices)
	case c.discovery == discoveryEndpointSlices && c.namespace == "":
		return bad("-discovery=endpointslices needs -namespace or $POD_NAMESPACE")
	case c.discovery == discoveryDNS && c.dnsServer != "" && !strings.Contains(c.service, ".") && c.namespace == "":
		return bad("-dns-server with the short -service %q needs -namespace or $POD_NAMESPACE (the name asked is SERVICE.NAMESPACE.svc.cluster.local), or -service's full name", c.service)
	case c.dnsServer != "" && net.ParseIP(c.dnsServer) == nil && !validHostPort(c.dnsServer):
		return bad("-dns-server %q: want host:port or an IP address", c.dnsServer)
	case c.drain < 0:
		return bad("-drain must not be negative")
	}
	if c.secret = []byte(getenv("GEECACHE_SECRET")); len(c.secret) == 0 {
		return bad("$GEECACHE_SECRET is empty: peers reach this node over the pod network, their requests must be signed")
	}
	return c, nil
}

// run serves until ctx is done, then leaves (the readiness probe fails,
// so that the other nodes' rings drop it), drains (nethttp.Pool.Drain:
// for cfg.drain its own Gets go to the keys' next owner while it keeps
// serving the peers), shuts the server down and returns. If its discovery
// cannot start, it shuts the server down at once and returns that error.
// ln may be nil (cfg.listen is used); client is used with
// -discovery=endpointslices. Its last log line is its exit: "geecache
// node stopped", at Error with the error it returns, if any.
func run(ctx context.Context, cfg config, ln net.Listener, client k8s.Interface, log *slog.Logger) (err error) {
	defer func() {
		if err != nil {
			log.Error("geecache node stopped", "err", err)
			return
		}
		log.Info("geecache node stopped")
	}()
	reg := cache.NewRegistry()
	pool, err := nethttp.NewPool(cfg.self, reg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: cfg.secret}, Logger: log,
		DrainFor: cfg.drain})
	if err != nil {
		return err
	}
	db := newSlowDB(scores(), cfg.delay, log)
	group, err := reg.NewGroup(groupName, cacheBytes, db.Getter(cfg.self), &cache.GroupOptions{Peers: pool, Logger: log})
	if err != nil {
		return err
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.listen); err != nil {
			return err
		}
	}
	var draining atomic.Bool
	srv := nethttp.NewServer("", handler(pool, group, &draining, log), nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	// Discovery runs until the server has stopped, so that the ring stays
	// right while the node drains. If it cannot start (options that cannot
	// work), the node stops: better a pod that crashes, where an operator
	// sees it, than a node alone that loads every key itself.
	dctx, stopDiscovery := context.WithCancel(context.Background())
	failed := make(chan error, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		var err error
		if cfg.discovery == discoveryEndpointSlices {
			err = kubernetes.Watch(dctx, pool, client, cfg.namespace, cfg.service, &kubernetes.Options{Port: peerPortName, Logger: log})
		} else {
			// The headless Service's A records (AAAA for an IPv6 pod), on
			// the port of this node's own URL, which every node shares.
			port, _ := strconv.Atoi(selfPort(cfg.self))
			err = dns.Watch(dctx, pool, dnsName(cfg), &dns.Options{Port: port, IPv6: selfIPv6(cfg.self), Resolver: dnsResolver(cfg), Logger: log})
		}
		if !errors.Is(err, context.Canceled) {
			log.Error("discovery stopped", "err", err)
			failed <- err
		}
	})
	log.Info("geecache node is running", "self", cfg.self, "listen", ln.Addr().String(), "discovery", cfg.discovery)

	var discoveryErr error
	select {
	case <-ctx.Done():
	case err = <-served:
	case discoveryErr = <-failed:
	}
	// Leave the peer set first: the readiness probe fails from now on, so
	// that the pod (Terminating already) leaves the Service's ready
	// endpoints and every other node's discovery drops it from its ring.
	draining.Store(true)
	if err == nil && discoveryErr == nil && cfg.drain > 0 {
		// Then drain (nethttp.Pool.Drain): this node's own Gets go to
		// the next node on the ring, the keys' new owner, while it keeps
		// serving the peers, so that the new owners take what it holds
		// from its memory instead of the database, for cfg.drain.
		dctx, stopDrain := context.WithCancel(context.Background())
		drained := make(chan error, 1)
		go func() { drained <- pool.Drain(dctx) }()
		select {
		case <-drained:
		case err = <-served: // the server failed: no drain without it
			stopDrain()
			<-drained
		}
		stopDrain()
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err == nil { // the server still runs: finish the requests in flight
		err = srv.Shutdown(sctx)
		if e := <-served; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
	}
	stopDiscovery()
	wg.Wait()
	return errors.Join(discoveryErr, err, pool.Close())
}

// handler serves the peer protocol under /_geecache/, the API and the
// probes: /healthz answers 200 while the process runs (liveness),
// /readyz 200 until SIGTERM and 503 while the node drains (readiness).
func handler(pool *nethttp.Pool, g *cache.Group, draining *atomic.Bool, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/_geecache/", pool)
	mux.HandleFunc("GET "+pathHealth, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET "+pathReady, func(w http.ResponseWriter, _ *http.Request) {
		if draining.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	mux.HandleFunc("GET /api", func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Query().Get("key")
		if key == "" {
			http.Error(w, "missing key parameter: use /api?key=NAME", http.StatusBadRequest)
			return
		}
		v, err := g.Get(r.Context(), key)
		switch {
		case errors.Is(err, getter.ErrNotFound):
			http.Error(w, key+" not exist", http.StatusNotFound)
			return
		case err != nil:
			log.Warn("api request failed", "key", key, "err", err)
			http.Error(w, "the score could not be loaded", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = v.WriteTo(w)
		_, _ = io.WriteString(w, "\n")
	})
	return mux
}

// selfPort is the port of the node's own URL, which every peer shares.
func selfPort(self string) string {
	u, err := url.Parse(self)
	if err != nil {
		return ""
	}
	return u.Port()
}

// selfIPv6 reports whether the node's own URL has an IPv6 address.
func selfIPv6(self string) bool {
	u, err := url.Parse(self)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(u.Hostname())
	return err == nil && a.Is6() && !a.Is4In6()
}

// validHostPort reports whether s is host:port.
func validHostPort(s string) bool {
	_, _, err := net.SplitHostPort(s)
	return err == nil
}

// dnsName is the name DNS discovery asks for: -service as it is, which
// /etc/resolv.conf's search list completes in a Pod. A DNS server of
// -dns-server is asked without a search list, so a short name is
// completed as a Pod's list would complete it in the default cluster
// domain: SERVICE.NAMESPACE.svc.cluster.local (another domain: give
// -service whole).
func dnsName(cfg config) string {
	switch {
	case cfg.dnsServer == "":
		return cfg.service
	case strings.Contains(cfg.service, "."):
		return strings.TrimSuffix(cfg.service, ".") + "."
	}
	return cfg.service + "." + cfg.namespace + ".svc.cluster.local."
}

// dnsResolver is the resolver DNS discovery asks: nil (the default, with
// /etc/resolv.conf) unless -dns-server names one, host:port or an IP
// address on port 53.
func dnsResolver(cfg config) *net.Resolver {
	if cfg.dnsServer == "" {
		return nil
	}
	addr := cfg.dnsServer
	if net.ParseIP(addr) != nil {
		addr = net.JoinHostPort(addr, "53")
	}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, network, addr)
	}}
}
