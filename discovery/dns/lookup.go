package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"time"
)

// errEmpty is an answer without any usable record (NOERROR with no data,
// or only SRV records whose target is "." or whose port is 0).
var errEmpty = errors.New("no records")

// answer is one successful lookup: the peer addresses, sorted and without
// duplicates, and the lowest TTL of the records behind them.
type answer struct {
	addrs []string
	ttl   time.Duration
}

// source is what the watch loop polls; the DNS client is one, and the
// loop's tests use a fake.
type source interface {
	lookup(ctx context.Context) (answer, error)
}

// dnsSource looks the name up over the wire and turns the records into
// peer addresses.
type dnsSource struct {
	c      client
	names  []string // candidates, absolute
	qtype  uint16
	scheme string
	port   int // for A and AAAA
}

// lookup tries each candidate name in turn: one that does not exist (or
// has no records) passes to the next; one that fails on every nameserver
// fails the lookup, so that a partial outage never picks a different
// name's records.
func (s *dnsSource) lookup(ctx context.Context) (answer, error) {
	var last error
	for _, name := range s.names {
		r, err := s.ask(ctx, name)
		if err != nil {
			return answer{}, fmt.Errorf("%s: %w", name, err)
		}
		switch {
		case r.rcode == rcodeNXDomain:
			last = fmt.Errorf("%s: %w", name, errNXDomain)
			continue
		case r.rcode != rcodeSuccess:
			return answer{}, fmt.Errorf("%s: %w", name, rcodeError(r.rcode))
		}
		if a := s.addrs(r); len(a) > 0 {
			return answer{addrs: a, ttl: time.Duration(r.ttl) * time.Second}, nil
		}
		last = fmt.Errorf("%s: %w", name, errEmpty)
	}
	return answer{}, last
}

// ask asks each nameserver in turn until one answers with NOERROR or
// NXDOMAIN; it fails with the last error when none does.
func (s *dnsSource) ask(ctx context.Context, name string) (reply, error) {
	var err error
	for _, srv := range s.c.servers {
		var r reply
		r, err = s.c.exchange(ctx, srv, name, s.qtype)
		if err == nil && r.rcode != rcodeSuccess && r.rcode != rcodeNXDomain {
			err = rcodeError(r.rcode)
		}
		if err == nil || ctx.Err() != nil {
			return r, err
		}
		err = fmt.Errorf("nameserver %s: %w", srv, err)
	}
	return reply{}, err
}

// addrs turns the records into peer URLs, sorted and without duplicates.
func (s *dnsSource) addrs(r reply) []string {
	out := make([]string, 0, len(r.records))
	for _, rec := range r.records {
		switch {
		case s.qtype != typeSRV:
			out = append(out, s.scheme+"://"+netip.AddrPortFrom(rec.addr.Unmap(), uint16(s.port)).String())
		case rec.port != 0 && rec.target != "" && checkName(rec.target+".") == nil:
			// Not "." (no service), and a host name: readName escapes
			// the bytes a URL's host cannot hold, and one such record
			// must not make the peer set refuse the whole list.
			out = append(out, s.scheme+"://"+net.JoinHostPort(rec.target, strconv.Itoa(int(rec.port))))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
