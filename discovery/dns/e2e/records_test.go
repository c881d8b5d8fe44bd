package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/geecache/geecache/discovery/dns"
)

const self = "http://10.0.0.1:8080"

// A records (a headless Service: one per ready Pod) become the ring,
// with the port from Options (a record listed twice is one peer), and a
// change of the records reaches it.
func TestARecords(t *testing.T) {
	s := startServer(t)
	s.set(normal, "cache.test. 1 IN A 10.0.0.1", "cache.test. 1 IN A 10.0.0.2", "cache.test. 1 IN A 10.0.0.2",
		"other.test. 1 IN A 10.9.9.9", "cache.test. 1 IN AAAA fd00::1")
	n := watch(t, s, self, "cache.test", dns.Options{Port: 8080})
	n.waitRing(t, self, "http://10.0.0.2:8080")

	s.set(normal, "cache.test. 1 IN A 10.0.0.1", "cache.test. 1 IN A 10.0.0.3", "cache.test. 1 IN A 10.0.0.4")
	d := n.waitRing(t, self, "http://10.0.0.3:8080", "http://10.0.0.4:8080")
	t.Logf("a change reached the ring %v after it (Interval 50ms, Debounce 20ms)", d)
	// Updates is counted once Set has returned: the ring can show the change
	// a moment before the count does, so wait (bounded) for it to settle.
	for i := 0; i < 100 && n.stats.Updates.Load() < 2; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if u := n.stats.Updates.Load(); u != 2 {
		t.Errorf("Stats.Updates = %d, want 2", u)
	}
}

// AAAA records with IPv6, in brackets.
func TestAAAARecords(t *testing.T) {
	s := startServer(t)
	s.set(normal, "cache.test. 1 IN AAAA fd00::1", "cache.test. 1 IN AAAA fd00::2", "cache.test. 1 IN A 10.0.0.9")
	n := watch(t, s, "http://[fd00::1]:8080", "cache.test.", dns.Options{Port: 8080, IPv6: true})
	n.waitRing(t, "http://[fd00::1]:8080", "http://[fd00::2]:8080")
}

// SRV records bring their own targets and ports; a target of "." or a
// port of 0 is no peer, and a target listed twice (at two priorities, or
// spelt in capitals) is one peer.
func TestSRVRecords(t *testing.T) {
	s := startServer(t)
	s.set(normal,
		"_cache._tcp.test. 1 IN SRV 0 10 8001 a.cache.test.",
		"_cache._tcp.test. 1 IN SRV 10 5 8002 b.cache.test.",
		"_cache._tcp.test. 1 IN SRV 20 5 8002 b.cache.test.",
		"_cache._tcp.test. 1 IN SRV 20 5 8002 B.Cache.Test.",
		"_cache._tcp.test. 1 IN SRV 0 10 0 c.cache.test.",
		"_cache._tcp.test. 1 IN SRV 0 0 8003 .")
	n := watch(t, s, "http://a.cache.test:8001", "_cache._tcp.test", dns.Options{SRV: true})
	n.waitRing(t, "http://a.cache.test:8001", "http://b.cache.test:8002")
	s.set(normal, "_cache._tcp.test. 1 IN SRV 0 10 8001 a.cache.test.", "_cache._tcp.test. 1 IN SRV 0 10 9002 b.cache.test.")
	n.waitRing(t, "http://a.cache.test:8001", "http://b.cache.test:9002")
}

// A name that is a CNAME for the records' name is followed.
func TestCNAME(t *testing.T) {
	s := startServer(t)
	s.set(normal, "cache.test. 1 IN CNAME pods.test.", "pods.test. 1 IN A 10.0.0.5", "cache.test. 1 IN A 10.0.0.6")
	n := watch(t, s, self, "cache.test", dns.Options{Port: 8080})
	n.waitRing(t, self, "http://10.0.0.5:8080")
}

// Every kind of failed or empty answer, the server gone silent
// (timeouts) and the server stopped (the port closed) leave the last good
// list in the ring, counted in Stats.Kept; once the server answers again,
// a change applies.
func TestFailuresKeepTheLastGoodList(t *testing.T) {
	for _, c := range []struct {
		name string
		m    mode
		stop bool
	}{
		{"empty", empty, false}, {"NXDOMAIN", nxdomain, false}, {"SERVFAIL", servfail, false},
		{"timeouts", silent, false}, {"server stopped", normal, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServer(t)
			good := []string{"cache.test. 1 IN A 10.0.0.1", "cache.test. 1 IN A 10.0.0.2"}
			s.set(normal, good...)
			n := watch(t, s, self, "cache.test", dns.Options{Port: 8080})
			want := []string{self, "http://10.0.0.2:8080"}
			n.waitRing(t, want...)
			s.set(c.m, good...)
			if c.stop {
				s.stop()
			}
			n.waitKept(t, 5)
			if got := n.pool.Addrs(); !slices.Equal(got, want) {
				t.Errorf("after %d failed lookups the ring is %q, want the last good %q", n.stats.Kept.Load(), got, want)
			}
			if c.stop {
				s.restart()
			}
			s.set(normal, "cache.test. 1 IN A 10.0.0.3")
			n.waitRing(t, self, "http://10.0.0.3:8080")
		})
	}
}

// An answer too big for UDP comes truncated (TC), and Watch asks again
// over TCP: all 1,000 records reach the ring.
func TestTruncatedAnswerOverTCP(t *testing.T) {
	s := startServer(t)
	var rrs []string
	want := []string{self}
	for i := range 1000 {
		ip := fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
		rrs = append(rrs, "cache.test. 1 IN A "+ip)
		want = append(want, "http://"+ip+":8080")
	}
	s.set(normal, rrs...)
	n := watch(t, s, self, "cache.test", dns.Options{Port: 8080})
	n.waitRing(t, want...)
	if s.tcpQueries() == 0 {
		t.Error("no query came over TCP")
	}
}

// An SRV target that is no host name (a "*" label, a byte that needs an
// escape) cannot be a peer URL: it is left out, as a target of "." is,
// and the other records still reach the ring; one such record does not
// hold back every change.
func TestSRVTargetThatIsNoHostName(t *testing.T) {
	s := startServer(t)
	s.set(normal,
		"_cache._tcp.test. 1 IN SRV 0 10 8001 a.cache.test.",
		"_cache._tcp.test. 1 IN SRV 0 10 8002 b.cache.test.",
		"_cache._tcp.test. 1 IN SRV 0 10 8004 *.cache.test.")
	n := watch(t, s, "http://a.cache.test:8001", "_cache._tcp.test", dns.Options{SRV: true})
	n.waitRing(t, "http://a.cache.test:8001", "http://b.cache.test:8002")
	s.set(normal,
		"_cache._tcp.test. 1 IN SRV 0 10 8001 a.cache.test.",
		"_cache._tcp.test. 1 IN SRV 0 10 8003 c.cache.test.",
		`_cache._tcp.test. 1 IN SRV 0 10 8005 we\032ird.cache.test.`)
	n.waitRing(t, "http://a.cache.test:8001", "http://c.cache.test:8003")
	if k := n.stats.Kept.Load(); k != 0 {
		t.Errorf("Stats.Kept = %d: a list was refused", k)
	}
}
