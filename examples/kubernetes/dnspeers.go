package main

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
)

// watchDNS sets pool's peers to the A (or AAAA, when the node's own
// address is IPv6) records of name, a headless Service, asked every
// interval, until ctx is done. An empty or failed answer keeps the last
// good list. It stands in for package discovery/dns of the main module
// until that lands; then this file becomes one call of dns.Watch.
func watchDNS(ctx context.Context, pool *nethttp.Pool, name string, interval time.Duration, log *slog.Logger) error {
	port := selfPort(pool.Self())
	var want6 bool
	if u, err := url.Parse(pool.Self()); err == nil {
		if a, err := netip.ParseAddr(u.Hostname()); err == nil {
			want6 = a.Is6() && !a.Is4In6()
		}
	}
	var last []string
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ips, err := net.DefaultResolver.LookupNetIP(ctx, map[bool]string{false: "ip4", true: "ip6"}[want6], name)
		var addrs []string
		for _, ip := range ips {
			addrs = append(addrs, "http://"+net.JoinHostPort(ip.Unmap().String(), port))
		}
		slices.Sort(addrs)
		addrs = slices.Compact(addrs)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil || len(addrs) == 0:
			log.Warn("dns: no peers in the answer; keeping the last good list", "name", name, "err", err, "kept", last)
		case !slices.Equal(addrs, last):
			if err := pool.Set(addrs...); err != nil {
				log.Warn("dns: peer list refused", "err", err)
				break
			}
			last = addrs
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
