package main

import (
	"net"
	"strings"
	"sync"
	"testing"

	mdns "github.com/miekg/dns"
)

// dnsServer is a DNS server on 127.0.0.1 (UDP) that answers an A query
// for any name in names with 127.0.0.1, TTL 1 s, and NXDOMAIN for others,
// as a cluster's DNS answers for a headless Service. It returns its
// address; the test's Cleanup stops it.
func dnsServer(t *testing.T, names ...string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &mdns.Server{PacketConn: pc, Handler: mdns.HandlerFunc(func(w mdns.ResponseWriter, q *mdns.Msg) {
		m := new(mdns.Msg)
		m.SetReply(q)
		m.Rcode = mdns.RcodeNameError
		for _, n := range names {
			if len(q.Question) == 1 && strings.EqualFold(q.Question[0].Name, mdns.Fqdn(n)) {
				m.Rcode = mdns.RcodeSuccess
				if q.Question[0].Qtype == mdns.TypeA {
					m.Answer = append(m.Answer, &mdns.A{
						Hdr: mdns.RR_Header{Name: q.Question[0].Name, Rrtype: mdns.TypeA, Class: mdns.ClassINET, Ttl: 1},
						A:   net.IPv4(127, 0, 0, 1),
					})
				}
			}
		}
		_ = w.WriteMsg(m)
	})}
	var started sync.WaitGroup
	started.Add(1)
	srv.NotifyStartedFunc = started.Done
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.ActivateAndServe() }()
	started.Wait()
	t.Cleanup(func() { _ = srv.Shutdown(); <-done })
	return pc.LocalAddr().String()
}
