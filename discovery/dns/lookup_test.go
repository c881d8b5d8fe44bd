package dns

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeResolver answers as a *net.Resolver would, from fixed records, and
// records what it was asked.
type fakeResolver struct {
	ips    []netip.Addr
	srvs   []*net.SRV
	err    error
	mu     sync.Mutex
	asked  []string      // "network host" or "SRV name"
	budget time.Duration // the time left on the last context
}

func (f *fakeResolver) ask(ctx context.Context, q string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, q)
	if d, ok := ctx.Deadline(); ok {
		f.budget = time.Until(d)
	}
}

func (f *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	f.ask(ctx, network+" "+host)
	return f.ips, f.err
}

func (f *fakeResolver) LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error) {
	f.ask(ctx, fmt.Sprintf("SRV %q %q %s", service, proto, name))
	return name, f.srvs, f.err
}

// source is the source Watch builds for name and opts, with r as its
// resolver.
func testSource(t *testing.T, r resolver, name string, opts Options) *resolverSource {
	t.Helper()
	_, src, err := newWatch(name, &opts)
	if err != nil {
		t.Fatal(err)
	}
	src.r = r
	return src
}

// A and AAAA records become Scheme://IP:Port, sorted and without
// duplicates (an IPv4-mapped address as IPv4, an IPv6 one in brackets);
// one family is asked, and the lookup is bounded by Timeout.
func TestLookupAddresses(t *testing.T) {
	ips := func(s ...string) (out []netip.Addr) {
		for _, a := range s {
			out = append(out, netip.MustParseAddr(a))
		}
		return out
	}
	for _, c := range []struct {
		opts    Options
		ips     []netip.Addr
		network string
		want    []string
	}{
		{Options{Port: 8080}, ips("10.0.0.2", "10.0.0.1", "10.0.0.2", "::ffff:10.0.0.3"), "ip4",
			[]string{"http://10.0.0.1:8080", "http://10.0.0.2:8080", "http://10.0.0.3:8080"}},
		{Options{Port: 443, Scheme: "https"}, ips("10.0.0.1"), "ip4", []string{"https://10.0.0.1:443"}},
		{Options{Port: 8080, IPv6: true}, ips("fd00::2", "fd00::1"), "ip6", []string{"http://[fd00::1]:8080", "http://[fd00::2]:8080"}},
	} {
		r := &fakeResolver{ips: c.ips}
		src := testSource(t, r, "cache.example", c.opts)
		got, err := src.lookup(t.Context())
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%+v: lookup = %q, %v; want %q", c.opts, got, err, c.want)
		}
		if want := []string{c.network + " cache.example"}; !slices.Equal(r.asked, want) {
			t.Errorf("%+v: asked %q, want %q", c.opts, r.asked, want)
		}
		if r.budget <= 9*time.Second || r.budget > 10*time.Second {
			t.Errorf("the lookup had %v left, want the default Timeout of 10s", r.budget)
		}
	}
}

// SRV records bring their own targets and ports, whatever their priority
// and weight: a port of 0, a target of "." and one that is no host name
// are no peers, a target is compared without case, and the records that
// the resolver kept when it left out some with invalid names (an error
// with records) still count.
func TestLookupSRV(t *testing.T) {
	r := &fakeResolver{srvs: []*net.SRV{
		{Target: "b.cache.example.", Port: 8002, Priority: 10, Weight: 5},
		{Target: "a.cache.example.", Port: 8001},
		{Target: "B.Cache.Example.", Port: 8002, Priority: 20},
		{Target: "c.cache.example.", Port: 0},
		{Target: ".", Port: 8003},
		{Target: "*.cache.example.", Port: 8004},
	}, err: &net.DNSError{Err: "DNS response contained records which contain invalid names", Name: "_cache._tcp.example"}}
	src := testSource(t, r, "_cache._tcp.example", Options{SRV: true})
	got, err := src.lookup(t.Context())
	if want := []string{"http://a.cache.example:8001", "http://b.cache.example:8002"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("lookup = %q, %v; want %q", got, err, want)
	}
	if want := []string{`SRV "" "" _cache._tcp.example`}; !slices.Equal(r.asked, want) {
		t.Errorf("asked %q, want %q (the name as it is)", r.asked, want)
	}
	// No usable record: errEmpty, which is "no records yet".
	r.srvs = r.srvs[3:]
	if _, err := src.lookup(t.Context()); !errors.Is(err, errEmpty) || !notFound(err) {
		t.Errorf("only unusable records: %v, want errEmpty", err)
	}
}

// A resolver's error fails the lookup as it is; a name that does not
// exist or has no records of the type is "not found" (logged at Info
// before the first good answer), every other failure is not.
func TestLookupErrors(t *testing.T) {
	for _, c := range []struct {
		err      error
		notFound bool
	}{
		{errNoSuchHost, true},
		{errServFail, false},
		{errMalformed, false},
		{&net.DNSError{Err: "i/o timeout", IsTimeout: true}, false},
		{context.DeadlineExceeded, false},
	} {
		for _, srv := range []bool{false, true} {
			opts := Options{Port: 80}
			if srv {
				opts = Options{SRV: true}
			}
			r := &fakeResolver{err: c.err}
			got, err := testSource(t, r, "cache.example", opts).lookup(t.Context())
			if got != nil || !errors.Is(err, c.err) || notFound(err) != c.notFound {
				t.Errorf("SRV %v, resolver error %v: lookup = %q, %v (not found: %v); want the error, not found %v",
					srv, c.err, got, err, notFound(err), c.notFound)
			}
		}
	}
}

// respondA answers a DNS query q with one A record, ip, as a recursive
// server would (the question echoed, the EDNS0 record dropped); nil for a
// message that is not such a query.
func respondA(q []byte, ip [4]byte) []byte {
	if len(q) < 12 || q[2]&0x80 != 0 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += 1 + int(q[end])
	}
	if end += 5; end > len(q) {
		return nil
	}
	r := slices.Concat(q[:2], []byte{0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0}, q[12:end]) // QR, RD, RA; one question, one answer
	if binary.BigEndian.Uint16(q[end-4:]) == 1 {                                     // A
		r = append(r, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4)
		return append(r, ip[:]...)
	}
	binary.BigEndian.PutUint16(r[6:], 0) // another type: no records
	return r
}

// Watch asks the *net.Resolver given in Options: here one that dials a
// DNS server on 127.0.0.1, as the e2e tests do with a full one.
func TestWatchAsksTheGivenResolver(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if r := respondA(buf[:n], [4]byte{10, 0, 0, 7}); r != nil {
				pc.WriteTo(r, from)
			}
		}
	}()
	defer func() { pc.Close(); <-served }()
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, network, pc.LocalAddr().String())
	}}

	p := newRecorder(t, nil)
	var stats Stats
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, p, "cache.example.", &Options{Port: 8080, Resolver: res, Interval: 10 * time.Millisecond,
			Stats: &stats, Logger: slog.New(slog.DiscardHandler)})
	}()
	want := []string{"http://10.0.0.1:80", "http://10.0.0.7:8080"}
	for start := time.Now(); !slices.Equal(p.Addrs(), want) && time.Since(start) < 10*time.Second; {
		time.Sleep(5 * time.Millisecond)
	}
	for start := time.Now(); stats.Lookups.Load() < 3 && time.Since(start) < 10*time.Second; {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Watch returned %v, want context.Canceled", err)
	}
	if got := p.Addrs(); !slices.Equal(got, want) {
		t.Errorf("ring %q, want %q", got, want)
	}
	if l, k := stats.Lookups.Load(), stats.Kept.Load(); l < 3 || k != 0 {
		t.Errorf("Stats: %d lookups, %d kept; want at least 3 lookups, every one good", l, k)
	}
}
