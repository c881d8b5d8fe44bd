package dns

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/geecache/geecache/cache"
)

// Options configures [Watch]. The zero value (with Port set for A or AAAA
// records) works in a Kubernetes Pod.
type Options struct {
	// Port is the peers' port for A and AAAA records, where the records
	// carry none: every address becomes Scheme://IP:Port. It is required
	// unless SRV is set, and must be 0 with SRV (the records' own ports
	// are used).
	Port int

	// SRV makes Watch ask for the SRV records of the name (for example
	// "_http._tcp.cache.default.svc.cluster.local") instead of its A
	// records: every record becomes Scheme://target:port with the
	// record's own target and port. Records of every priority and weight
	// are peers; a port of 0, a target of "." and one that is no host
	// name (a "*" label, a byte other than a letter, digit, "-" or "_")
	// are ignored. A target is put on the ring as a name and never
	// resolved by Watch: one that has no address fails when a request is
	// sent to it, and the peer set ejects it as it ejects any peer that
	// does not answer.
	SRV bool

	// IPv6 makes Watch ask for AAAA records instead of A records (not
	// with SRV). One family is asked, never both: a dual-stack Pod has
	// one address of each, and both would be two ring members for one
	// node.
	IPv6 bool

	// Scheme is the scheme of the peer URLs: "http" when empty. Each
	// node's own address (its Pool's self) must be spelled as Watch
	// builds it, for example "http://10.1.2.3:8080" (with IPv6:
	// "http://[fd00::3]:8080"; with SRV, the record's target name).
	Scheme string

	// Resolver is the resolver that asks DNS; nil means
	// net.DefaultResolver, which applies the nameservers, search list
	// and ndots of /etc/resolv.conf (a Pod's short name "cache" finds
	// "cache.<namespace>.svc.cluster.local."). To ask one DNS server,
	// give a resolver that dials it:
	//
	//	&net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
	//		return new(net.Dialer).DialContext(ctx, network, "10.96.0.10:53")
	//	}}
	//
	// (the search list of /etc/resolv.conf still applies to a name
	// without its final dot).
	Resolver *net.Resolver

	// Interval is the time between two lookups (default 5s); only a
	// changed answer is confirmed sooner, after Debounce. A failed lookup
	// is retried at the same interval.
	Interval time.Duration

	// Debounce is how long a changed answer must hold before it reaches
	// the ring (default 500ms): Watch asks again after Debounce and
	// applies the change when the second answer agrees, so that a record
	// that flickers away and back never moves keys. While answers keep
	// changing, the latest is applied once 4 debounce periods have passed
	// since the first change, so a flood of changes makes at most one
	// Set per 2 seconds by default. The first answer is applied at once.
	Debounce time.Duration

	// Timeout bounds each lookup, search names, nameservers and retries
	// together (default 10s).
	Timeout time.Duration

	// Logger receives a line for every change applied (at Info), every
	// failed or empty answer that left the peers as they were (at Warn; at
	// Info for a name with no records before the first good answer, as on
	// a fresh deploy) and the recovery after such answers (at Info).
	// Default slog.Default(). These are the only Info lines: a change of
	// the cluster moves keys between nodes, which an operator reading the
	// log wants to see, and it is rare (debounced; nothing is logged while
	// the answer stays the same).
	Logger *slog.Logger

	// Stats, when not nil, counts what Watch does; read its fields at any
	// time (they are atomic).
	Stats *Stats
}

// Stats counts the lookups of a [Watch], for monitoring: a growing Kept is
// a DNS problem the ring is riding out on its last good list.
type Stats struct {
	// Lookups is the number of lookups made.
	Lookups atomic.Uint64
	// Updates is the number of times the peer list was replaced.
	Updates atomic.Uint64
	// Kept is the number of lookups that failed (timeout, SERVFAIL,
	// NXDOMAIN, a malformed answer, a list Set refused) or found no
	// records, and so left the peer list as it was.
	Kept atomic.Uint64
}

// Watch keeps peers in step with the DNS records of name until ctx is
// done: it looks the name up, replaces the list with the addresses found
// (peers.Set, as for a list from a flag; a *picker.Peers, an
// *nethttp.Pool and a *lambda.Peers all fit), and asks again every
// opts.Interval. A change applies after it has held for opts.Debounce. A
// failed or empty answer never empties the ring: the last good list
// stays, and Watch logs it and counts it in opts.Stats.
//
// Watch blocks; run it in its own goroutine. It returns an error wrapping
// ctx's error when ctx is done, or at once an error wrapping [cache.ErrConfig] for a name
// or options that cannot work (opts must at least give the Port of A and
// AAAA records, or set SRV).
func Watch(ctx context.Context, peers interface{ Set(addrs ...string) error }, name string, opts *Options) error {
	cfg, src, err := newWatch(name, opts)
	if err != nil {
		return err
	}
	if err := watch(ctx, peers, src, cfg); err != nil {
		return fmt.Errorf("geecache: discovery/dns: watching %q: %w", name, err)
	}
	return nil
}

// config is Options with the defaults applied.
type config struct {
	interval, debounce time.Duration
	log                *slog.Logger
	stats              *Stats
	name               string // for the log
}

func newWatch(name string, opts *Options) (config, *resolverSource, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("geecache: discovery/dns: %w: "+format, append([]any{cache.ErrConfig}, args...)...)
	}
	cfg := config{
		interval: cmp.Or(o.Interval, 5*time.Second),
		debounce: cmp.Or(o.Debounce, 500*time.Millisecond),
		log:      cmp.Or(o.Logger, slog.Default()),
		stats:    cmp.Or(o.Stats, new(Stats)), // without Options.Stats, counted and read by no one
		name:     name,
	}
	o.Timeout = cmp.Or(o.Timeout, 10*time.Second)
	o.Scheme = cmp.Or(o.Scheme, "http")
	switch {
	case cfg.interval < 0 || cfg.debounce < 0 || o.Timeout < 0:
		return cfg, nil, bad("Interval, Debounce and Timeout must be positive")
	case o.SRV && o.IPv6:
		return cfg, nil, bad("IPv6 does not apply to SRV records: their targets are names")
	case o.SRV && o.Port != 0:
		return cfg, nil, bad("Port must be 0 with SRV: the records carry the ports")
	case !o.SRV && (o.Port <= 0 || o.Port > 65535):
		return cfg, nil, bad("Port %d: A and AAAA records need a port from 1 to 65535", o.Port)
	case strings.ContainsAny(o.Scheme, ":/ "):
		return cfg, nil, bad("Scheme %q: a scheme only, such as http", o.Scheme)
	case checkName(strings.TrimSuffix(name, ".")+".") != nil:
		return cfg, nil, bad("%q is not a domain name", name)
	}
	src := &resolverSource{r: o.Resolver, name: name, srv: o.SRV, network: "ip4", scheme: o.Scheme, port: o.Port, timeout: o.Timeout}
	if o.Resolver == nil {
		src.r = net.DefaultResolver
	}
	if o.IPv6 {
		src.network = "ip6"
	}
	return cfg, src, nil
}

// maxHold is how many debounce periods a change waits at most while the
// answers keep changing.
const maxHold = 4

// watch is the poll loop over any source: it only waits on timers and ctx,
// so its tests run it in a synctest bubble.
func watch(ctx context.Context, peers interface{ Set(addrs ...string) error }, src source, cfg config) error {
	var (
		applied  []string  // the list the ring has, nil before the first good answer
		pending  []string  // a changed answer waiting for its debounce
		since    time.Time // when pending first appeared
		failures int       // consecutive failed or empty lookups
		timer    = time.NewTimer(0)
	)
	defer timer.Stop()
	logCtx := context.WithoutCancel(ctx)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		addrs, err := src.lookup(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		cfg.stats.Lookups.Add(1)
		next := cfg.interval
		if err != nil {
			failures++
			cfg.keep(logCtx, applied, err, next)
			timer.Reset(next)
			continue
		}
		if failures > 0 {
			cfg.log.LogAttrs(logCtx, slog.LevelInfo, "geecache: DNS answers again",
				slog.String("name", cfg.name), slog.Int("failed_lookups", failures))
			failures = 0
		}
		now := time.Now()
		switch {
		case slices.Equal(addrs, applied):
			pending = nil // a change that did not hold
		case applied != nil && pending == nil:
			pending, since, next = addrs, now, cfg.debounce // changed: wait for it to hold
		case applied != nil && !slices.Equal(addrs, pending) && now.Sub(since) < maxHold*cfg.debounce:
			pending, next = addrs, cfg.debounce // changed again
		default: // the first answer, a change that held, or one that kept changing for too long
			pending = nil
			if err := peers.Set(addrs...); err != nil {
				cfg.keep(logCtx, applied, fmt.Errorf("the peer set refused %q: %w", addrs, err), next)
				break
			}
			applied = addrs
			cfg.log.LogAttrs(logCtx, slog.LevelInfo, "geecache: DNS peers changed",
				slog.String("name", cfg.name), slog.Any("peers", addrs))
			cfg.stats.Updates.Add(1)
		}
		timer.Reset(next)
	}
}

// keep logs and counts a lookup whose answer left the peers as they were.
// Before the first good answer, a name with no records yet (a fresh
// deploy: a headless Service lists its pods once they are ready) logs at
// Info, as the Kubernetes watch does: nothing is kept and nothing is wrong
// yet. Every other failure logs at Warn.
func (cfg config) keep(ctx context.Context, applied []string, err error, retry time.Duration) {
	cfg.stats.Kept.Add(1)
	level := slog.LevelWarn
	if applied == nil && notFound(err) {
		level = slog.LevelInfo
	}
	cfg.log.LogAttrs(ctx, level, "geecache: DNS lookup failed; keeping the last good peer list",
		slog.String("name", cfg.name), slog.Any("error", err), slog.Any("peers", applied), slog.Duration("retry_in", retry))
}
