package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/discovery/dns"
	mdns "github.com/miekg/dns"
)

// liar is a DNS server on 127.0.0.1 that answers as its current lie says,
// over UDP and TCP on one port; with no lie it answers the truth (one A
// record, 10.0.0.2).
type liar struct {
	addr string
	pc   net.PacketConn
	ln   net.Listener
	wg   sync.WaitGroup

	mu  sync.Mutex
	udp func(q []byte) [][]byte    // the datagrams to send for a query
	tcp func(c net.Conn, q []byte) // what to do on a TCP connection
}

func startLiar(t *testing.T) *liar {
	t.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err != nil {
			pc.Close()
			continue
		}
		l := &liar{addr: pc.LocalAddr().String(), pc: pc, ln: ln}
		l.wg.Add(2)
		go l.serveUDP()
		go l.serveTCP()
		t.Cleanup(func() { pc.Close(); ln.Close(); l.wg.Wait() })
		return l
	}
	t.Fatal("no port free for both UDP and TCP")
	return nil
}

func (l *liar) lie(udp func(q []byte) [][]byte, tcp func(c net.Conn, q []byte)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.udp, l.tcp = udp, tcp
}

func (l *liar) serveUDP() {
	defer l.wg.Done()
	buf := make([]byte, 65535)
	for {
		n, from, err := l.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		l.mu.Lock()
		udp := l.udp
		l.mu.Unlock()
		q := slices.Clone(buf[:n])
		out := [][]byte{truth(q)}
		if udp != nil {
			out = udp(q)
		}
		for _, d := range out {
			l.pc.WriteTo(d, from)
		}
	}
}

func (l *liar) serveTCP() {
	defer l.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			var n [2]byte
			if _, err := io.ReadFull(c, n[:]); err != nil {
				return
			}
			q := make([]byte, binary.BigEndian.Uint16(n[:]))
			if _, err := io.ReadFull(c, q); err != nil {
				return
			}
			l.mu.Lock()
			tcp := l.tcp
			l.mu.Unlock()
			if tcp != nil {
				tcp(c, q)
				return
			}
			a := truth(q)
			c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(a))), a...))
		}()
	}
}

// truth answers a query with the A record 10.0.0.2.
func truth(q []byte) []byte {
	var m mdns.Msg
	if m.Unpack(q) != nil || len(m.Question) != 1 {
		return nil
	}
	r := new(mdns.Msg)
	r.SetReply(&m)
	rr, _ := mdns.NewRR(m.Question[0].Name + " 1 IN A 10.0.0.2")
	r.Answer = []mdns.RR{rr}
	b, _ := r.Pack()
	return b
}

// reply is the query turned into a response header (QR set, the same ID
// and question), with the answer count an and the bytes body after it.
func reply(q []byte, an uint16, body []byte) []byte {
	var m mdns.Msg
	if m.Unpack(q) != nil {
		return nil
	}
	m.Response, m.Extra = true, nil
	b, _ := m.Pack()
	binary.BigEndian.PutUint16(b[6:], an)
	return append(b, body...)
}

// Servers that lie in every way found here never make Watch panic or
// change the ring: the last good list stays, and each lie is a kept
// lookup.
func TestLyingServers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var rngMu sync.Mutex
	garbage := func(n int) []byte {
		rngMu.Lock()
		defer rngMu.Unlock()
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	hang := func(c net.Conn, q []byte) { io.Copy(io.Discard, c) }
	tc := func(q []byte) [][]byte {
		r := reply(q, 0, nil)
		r[2] |= 2 // TC
		return [][]byte{r}
	}
	for _, c := range []struct {
		name string
		udp  func(q []byte) [][]byte
		tcp  func(c net.Conn, q []byte)
	}{
		{"garbage", func(q []byte) [][]byte { return [][]byte{garbage(1 + len(q)%500), garbage(12), garbage(3000)} }, nil},
		{"garbage after a true header", func(q []byte) [][]byte {
			return [][]byte{append(slices.Clone(q[:2]), garbage(400)...)}
		}, nil},
		{"only other IDs", func(q []byte) [][]byte {
			r := truth(q)
			r[0] ^= 0xff
			return [][]byte{r, r, r}
		}, nil},
		{"pointer loop", func(q []byte) [][]byte {
			r := reply(q, 1, nil)
			return [][]byte{binary.BigEndian.AppendUint16(r, 0xc000|uint16(len(r)))} // points at itself
		}, nil},
		{"65535 answers claimed", func(q []byte) [][]byte { return [][]byte{reply(q, 65535, garbage(1000))} }, nil},
		{"A of 3 bytes", func(q []byte) [][]byte {
			return [][]byte{reply(q, 1, []byte{0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 3, 10, 0, 0})}
		}, nil},
		{"truncated, TCP garbage", tc, func(c net.Conn, q []byte) {
			c.Write(append([]byte{0x10, 0}, garbage(0x1000)...))
		}},
		{"truncated, TCP hangs", tc, hang},
		{"truncated, TCP cut short", tc, func(c net.Conn, q []byte) { c.Write([]byte{0xff, 0xff, 1, 2, 3}) }},
		{"truncated, TCP truncated again", tc, func(c net.Conn, q []byte) {
			r := reply(q, 0, nil)
			r[2] |= 2
			c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(r))), r...))
		}},
		{"UDP hangs", func(q []byte) [][]byte { return nil }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := startLiar(t)
			n := watch(t, &server{addr: l.addr}, self, "cache.test", dns.Options{Port: 8080})
			want := []string{self, "http://10.0.0.2:8080"}
			n.waitRing(t, want...)
			l.lie(c.udp, c.tcp)
			n.waitKept(t, 3)
			if got := n.pool.Addrs(); !slices.Equal(got, want) {
				t.Errorf("ring %q after lies, want the last good %q", got, want)
			}
			// The truth again: the same list, so no Set.
			l.lie(nil, nil)
			before, lookups := n.stats.Updates.Load(), n.stats.Lookups.Load()
			for start := time.Now(); n.stats.Lookups.Load() < lookups+3 && time.Since(start) < 10*time.Second; {
				time.Sleep(5 * time.Millisecond)
			}
			if n.stats.Lookups.Load() < lookups+3 || n.stats.Updates.Load() != before {
				t.Errorf("after the lies: %d lookups, %d updates, want 3 lookups and no update",
					n.stats.Lookups.Load()-lookups, n.stats.Updates.Load()-before)
			}
		})
	}
}

// A server that floods: a TCP answer of 64 KiB of garbage followed by an
// endless stream, and UDP datagrams of the largest size. Each lookup
// allocates a bounded amount (the largest DNS message twice, plus
// change), whatever the server sends.
func TestFloodingServerBoundedMemory(t *testing.T) {
	l := startLiar(t)
	chunk := bytes.Repeat([]byte{0xc0}, 65535)
	l.lie(func(q []byte) [][]byte {
		r := reply(q, 1, nil)
		r[2] |= 2 // TC: ask again over TCP
		return [][]byte{r}
	}, func(c net.Conn, q []byte) {
		c.Write([]byte{0xff, 0xff})
		for {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	})
	n := watch(t, &server{addr: l.addr}, self, "cache.test", dns.Options{Port: 8080})
	n.waitKept(t, 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := n.stats.Lookups.Load()
	n.waitKept(t, 10)
	runtime.ReadMemStats(&after)
	lookups := n.stats.Lookups.Load() - start
	n.stop()
	per := (after.TotalAlloc - before.TotalAlloc) / max(lookups, 1)
	t.Logf("%d bytes allocated per lookup against a flood, over %d lookups", per, lookups)
	if per > 512<<10 {
		t.Errorf("%d bytes allocated per lookup, want at most 512 KiB", per)
	}
	if got := n.pool.Addrs(); !slices.Equal(got, []string{self}) {
		t.Errorf("ring %q, want self alone", got)
	}
}

// Cancelling the context while a query hangs (a server that never
// answers, and a Timeout of a minute) stops Watch at once: it returns
// context.Canceled, and goleak (TestMain) finds no goroutine left.
func TestCancelDuringHangingQuery(t *testing.T) {
	l := startLiar(t)
	asked := make(chan struct{}, 1)
	l.lie(func(q []byte) [][]byte {
		select {
		case asked <- struct{}{}:
		default:
		}
		return nil
	}, nil)
	pool, err := nethttp.NewPool(self, cache.NewRegistry(), &nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- dns.Watch(ctx, pool, "cache.test", &dns.Options{Port: 8080, Resolver: resolver(l.addr), Timeout: time.Minute,
			Logger: slog.New(slog.DiscardHandler)})
	}()
	<-asked
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second): // a bound on the wait, far below the query's minute
		t.Fatal("Watch did not return after cancel while its query hung")
	}
}
