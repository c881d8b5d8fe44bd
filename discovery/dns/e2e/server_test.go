package e2e

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/discovery/dns"
	mdns "github.com/miekg/dns"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mode is how the server answers.
type mode int

const (
	normal   mode = iota
	empty         // NOERROR without records
	nxdomain      // the name does not exist
	servfail      // the server fails
	silent        // no answer at all: every query times out
)

// server is a DNS server on 127.0.0.1 (UDP and TCP on one port) whose
// records and behaviour the test changes while it runs.
type server struct {
	t    *testing.T
	addr string

	mu      sync.Mutex
	records map[uint16][]mdns.RR // by type, for any name
	mode    mode
	tcp     int // queries over TCP
	udp, tc *mdns.Server
}

func startServer(t *testing.T) *server {
	t.Helper()
	s := &server{t: t, records: map[uint16][]mdns.RR{}}
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err != nil {
			pc.Close() // the port is taken for TCP: another one
			continue
		}
		s.addr = pc.LocalAddr().String()
		s.serve(pc, ln)
		t.Cleanup(s.stop)
		return s
	}
	t.Fatal("no port free for both UDP and TCP")
	return nil
}

func (s *server) serve(pc net.PacketConn, ln net.Listener) {
	s.udp = &mdns.Server{PacketConn: pc, Handler: mdns.HandlerFunc(s.handle)}
	s.tc = &mdns.Server{Listener: ln, Handler: mdns.HandlerFunc(s.handle)}
	var wg sync.WaitGroup
	wg.Add(2)
	s.udp.NotifyStartedFunc, s.tc.NotifyStartedFunc = wg.Done, wg.Done
	go s.udp.ActivateAndServe()
	go s.tc.ActivateAndServe()
	wg.Wait()
}

// stop shuts the server down (a closed port: queries are refused).
func (s *server) stop() {
	s.mu.Lock()
	udp, tc := s.udp, s.tc
	s.udp, s.tc = nil, nil
	s.mu.Unlock()
	if udp != nil {
		udp.Shutdown()
		tc.Shutdown()
	}
}

// restart serves again on the same port.
func (s *server) restart() {
	s.t.Helper()
	pc, err := net.ListenPacket("udp", s.addr)
	if err != nil {
		s.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.serve(pc, ln)
}

func (s *server) set(m mode, rrs ...string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
	s.records = map[uint16][]mdns.RR{}
	for _, r := range rrs {
		rr, err := mdns.NewRR(r)
		if err != nil {
			s.t.Fatal(err)
		}
		s.records[rr.Header().Rrtype] = append(s.records[rr.Header().Rrtype], rr)
	}
}

func (s *server) tcpQueries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tcp
}

func (s *server) handle(w mdns.ResponseWriter, r *mdns.Msg) {
	s.mu.Lock()
	md, q := s.mode, r.Question[0]
	// As a recursive resolver: the CNAME chain from the name asked, then
	// the records of its last name.
	var answer []mdns.RR
	name := q.Name
	for range 8 {
		i := slices.IndexFunc(s.records[mdns.TypeCNAME], func(rr mdns.RR) bool { return strings.EqualFold(rr.Header().Name, name) })
		if i < 0 {
			break
		}
		cname := s.records[mdns.TypeCNAME][i]
		answer, name = append(answer, mdns.Copy(cname)), cname.(*mdns.CNAME).Target
	}
	for _, rr := range s.records[q.Qtype] {
		if strings.EqualFold(rr.Header().Name, name) {
			answer = append(answer, mdns.Copy(rr))
		}
	}
	isTCP := w.LocalAddr().Network() == "tcp"
	if isTCP {
		s.tcp++
	}
	s.mu.Unlock()
	m := new(mdns.Msg)
	m.SetReply(r)
	switch md {
	case silent:
		return
	case empty:
	case nxdomain:
		m.Rcode = mdns.RcodeNameError
	case servfail:
		m.Rcode = mdns.RcodeServerFailure
	default:
		m.Answer = answer
	}
	if !isTCP {
		size := 512
		if opt := r.IsEdns0(); opt != nil {
			size = int(opt.UDPSize())
		}
		m.Truncate(size) // as a real server: TC set when the answer does not fit
	}
	w.WriteMsg(m)
}

// node is a Pool fed by a Watch of the server.
type node struct {
	pool  *nethttp.Pool
	stats dns.Stats
	stop  func()
}

// resolver is a Go resolver that asks the DNS server at addr, over the
// network the resolver asks for (UDP, or TCP for a truncated answer).
func resolver(addr string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, network, addr)
	}}
}

// watch starts a Watch of name on s for a Pool whose self is self, with
// short intervals (the test runs in real time).
func watch(t *testing.T, s *server, self, name string, opts dns.Options) *node {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	pool, err := nethttp.NewPool(self, cache.NewRegistry(), &nethttp.PoolOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{pool: pool}
	opts.Resolver = resolver(s.addr)
	opts.Interval = 50 * time.Millisecond
	opts.Debounce, opts.Timeout = 20*time.Millisecond, 100*time.Millisecond
	opts.Stats, opts.Logger = &n.stats, quiet
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dns.Watch(ctx, pool, name, &opts) }()
	n.stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v after cancel, want context.Canceled", err)
		}
		pool.Close()
	})
	t.Cleanup(n.stop)
	return n
}

// waitRing waits, at most 10 s, for the pool's ring to be want (sorted),
// and returns how long it took.
func (n *node) waitRing(t *testing.T, want ...string) time.Duration {
	t.Helper()
	slices.Sort(want)
	start := time.Now()
	for time.Since(start) < 10*time.Second {
		if slices.Equal(n.pool.Addrs(), want) {
			return time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := n.pool.Addrs(); len(want) > 10 {
		t.Fatalf("ring of %d addresses, want %d (first %q, want %q)", len(got), len(want), got[:min(3, len(got))], want[:3])
	}
	t.Fatalf("ring %q, want %q", n.pool.Addrs(), want)
	return 0
}

// waitKept waits, at most 10 s, until k more lookups have been kept.
func (n *node) waitKept(t *testing.T, k uint64) {
	t.Helper()
	base := n.stats.Kept.Load()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(5 * time.Millisecond) {
		if n.stats.Kept.Load() >= base+k {
			return
		}
	}
	t.Fatalf("Stats.Kept went from %d to %d, want %d more", base, n.stats.Kept.Load(), k)
}
