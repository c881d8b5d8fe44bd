package dns

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// zone is a DNS server on 127.0.0.1 (UDP) for the lookup's own tests,
// built on the test's respond: each name answers with its rcode and A
// records (TTL 7 s), a name it does not know with NXDOMAIN. It records
// the names it was asked.
type zone struct {
	pc    net.PacketConn
	mu    sync.Mutex
	names map[string]zoneName
	asked []string
}

type zoneName struct {
	rcode uint16
	ips   [][]byte
}

func startZone(t *testing.T, names map[string]zoneName) *zone {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	z := &zone{pc: pc, names: names}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := buf[:n]
			name, off, err := readName(q, 12)
			if err != nil || off+4 > n {
				continue
			}
			id, qtype := binary.BigEndian.Uint16(q), binary.BigEndian.Uint16(q[off:])
			z.mu.Lock()
			z.asked = append(z.asked, name)
			zn, ok := z.names[name]
			z.mu.Unlock()
			if !ok {
				zn.rcode = rcodeNXDomain
			}
			var rrs []rrSpec
			for _, ip := range zn.ips {
				rrs = append(rrs, rrSpec{name, typeA, 7, ip})
			}
			pc.WriteTo(respond(id, name, qtype, zn.rcode, rrs...), from)
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return z
}

func (z *zone) source(names ...string) *dnsSource {
	return &dnsSource{c: client{servers: []string{z.pc.LocalAddr().String()}, timeout: time.Second},
		names: names, qtype: typeA, scheme: "http", port: 8080}
}

// The search list over the wire: a candidate that does not exist
// (NXDOMAIN) or has no records passes to the next, and the first with
// records is the answer, with the records' TTL; one whose server fails
// (SERVFAIL) fails the lookup there, so that an outage of the right name
// never picks another name's records. A name found nowhere fails with
// NXDOMAIN.
func TestLookupSearchList(t *testing.T) {
	z := startZone(t, map[string]zoneName{
		"cache.empty.":     {},
		"cache.svc.local.": {ips: [][]byte{{10, 0, 0, 2}, {10, 0, 0, 1}, {10, 0, 0, 2}}},
		"cache.broken.":    {rcode: rcodeServFail},
		"cache.other.":     {ips: [][]byte{{10, 9, 9, 9}}},
	})
	a, err := z.source("cache.ns.svc.local.", "cache.empty.", "cache.svc.local.", "cache.other.").lookup(context.Background())
	if err != nil || !slices.Equal(a.addrs, []string{"http://10.0.0.1:8080", "http://10.0.0.2:8080"}) || a.ttl != 7*time.Second {
		t.Errorf("lookup = %+v, %v; want the third candidate's two peers, TTL 7s", a, err)
	}
	if _, err := z.source("cache.broken.", "cache.other.").lookup(context.Background()); !errors.Is(err, errServFail) {
		t.Errorf("SERVFAIL on the first candidate: %v, want errServFail (and not the next name's records)", err)
	}
	if _, err := z.source("cache.nowhere.", "cache.empty.", "cache.gone.").lookup(context.Background()); !errors.Is(err, errNXDomain) {
		t.Errorf("a name found nowhere: %v, want errNXDomain", err)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if want := "cache.ns.svc.local. cache.empty. cache.svc.local. cache.broken. cache.nowhere. cache.empty. cache.gone."; strings.Join(z.asked, " ") != want {
		t.Errorf("asked %q, want %q (no candidate asked past the answer or the failure)", strings.Join(z.asked, " "), want)
	}
}

// A server that refuses a query, or cannot parse or serve it, may answer
// with the query's ID, an error RCODE and no question section (RFC 1035
// does not require the question to be echoed). Such a reply fails the
// lookup when it arrives, with the error its RCODE names, instead of
// being ignored as another query's answer while the lookup waits out its
// timeout. The server here sends exactly that reply; the client's timeout
// and the context's deadline are an hour away, so a lookup that returns
// with the reply's error, the context still live, returned because of
// the reply.
func TestQuestionlessErrorReplyFailsTheLookup(t *testing.T) {
	for _, c := range []struct {
		name  string
		rcode uint16
		want  error
	}{
		{"FORMERR", rcodeFormErr, errRcode},
		{"SERVFAIL", rcodeServFail, errServFail},
		{"NOTIMP", rcodeNotImp, errRcode},
		{"REFUSED", rcodeRefused, errRcode},
	} {
		t.Run(c.name, func(t *testing.T) {
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				buf := make([]byte, 512)
				for {
					n, from, err := pc.ReadFrom(buf)
					if err != nil {
						return
					}
					if n < 12 {
						continue
					}
					// ID, QR and the RCODE; no question, answer,
					// authority or additional record.
					b := append([]byte{buf[0], buf[1]}, byte(flagQR>>8), byte(c.rcode), 0, 0, 0, 0, 0, 0, 0, 0)
					pc.WriteTo(b, from)
				}
			}()
			t.Cleanup(func() { pc.Close(); <-done })

			ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
			defer cancel()
			src := &dnsSource{c: client{servers: []string{pc.LocalAddr().String()}, timeout: time.Hour},
				names: []string{"cache.example."}, qtype: typeA, scheme: "http", port: 8080}
			a, err := src.lookup(ctx)
			if !errors.Is(err, c.want) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
				t.Fatalf("lookup = %+v, %v (context: %v); want an error wrapping %v, returned at the reply", a, err, ctx.Err(), c.want)
			}
			if !strings.Contains(err.Error(), "without the question") {
				t.Errorf("error %q does not say the reply had no question section", err)
			}
		})
	}
}
