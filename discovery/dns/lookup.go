package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// errEmpty is an answer without any usable record: only SRV records whose
// target is "." or no host name, or whose port is 0.
var errEmpty = errors.New("no records")

// source is what the watch loop polls; a resolverSource is one, and the
// loop's tests use a fake.
type source interface {
	lookup(ctx context.Context) ([]string, error)
}

// resolver is the part of *net.Resolver that Watch uses, so that tests can
// answer without a DNS server.
type resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error)
}

// resolverSource asks a resolver for the records of a name and turns them
// into peer URLs.
type resolverSource struct {
	r       resolver
	name    string
	srv     bool
	network string // "ip4" or "ip6", for A and AAAA
	scheme  string
	port    int // for A and AAAA
	timeout time.Duration
}

// lookup returns the peer URLs of the records, sorted and without
// duplicates. A name without records fails with the resolver's error (a
// *net.DNSError whose IsNotFound is set) or errEmpty.
func (s *resolverSource) lookup(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var out []string
	if s.srv {
		_, recs, err := s.r.LookupSRV(ctx, "", "", s.name)
		if err != nil && len(recs) == 0 {
			// With records, the error says only that some of them had a
			// target that is no domain name, and they were left out.
			return nil, err
		}
		for _, rec := range recs {
			target := strings.ToLower(strings.TrimSuffix(rec.Target, "."))
			if rec.Port != 0 && target != "" && checkName(target+".") == nil {
				// Not "." (no service), and a host name: one record that
				// a URL's host cannot hold must not make the peer set
				// refuse the whole list.
				out = append(out, s.scheme+"://"+net.JoinHostPort(target, strconv.Itoa(int(rec.Port))))
			}
		}
	} else {
		ips, err := s.r.LookupNetIP(ctx, s.network, s.name)
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			out = append(out, s.scheme+"://"+netip.AddrPortFrom(ip.Unmap(), uint16(s.port)).String())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", s.name, errEmpty)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// notFound reports whether err says that the name has no records yet: it
// does not exist, or has none of the type asked, or none usable.
func notFound(err error) bool {
	var dnsErr *net.DNSError
	return errors.Is(err, errEmpty) || errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

// checkName reports whether name (absolute, with its final ".") is a host
// name that a URL can hold: labels of 1 to 63 letters, digits, "-" or "_",
// at most 253 characters in all.
func checkName(name string) error {
	if name == "." || !strings.HasSuffix(name, ".") || len(name) > 254 {
		return fmt.Errorf("name %q: not a domain name of 1 to 253 characters", name)
	}
	for l := range strings.SplitSeq(name[:len(name)-1], ".") {
		if len(l) == 0 || len(l) > 63 {
			return fmt.Errorf("name %q: a label is empty or longer than 63 characters", name)
		}
		for _, ch := range []byte(l) {
			if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
				return fmt.Errorf("name %q: only letters, digits, - and _ in a label", name)
			}
		}
	}
	return nil
}
