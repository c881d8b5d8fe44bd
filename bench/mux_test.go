package bench

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/bench/internal/fair"
	"github.com/geecache/geecache/getter"
)

// The multiplexed-transport study: does one HTTP/2
// cleartext (h2c) connection per peer, many requests in flight on it,
// beat HTTP/1.1 keep-alive (one request per connection at a time, a pool
// of connections) at 64 clients? Go's net/http serves and fetches h2c
// itself (http.Protocols, Go 1.24+), so both the bare baseline and
// GeeCache's nethttp binding run over either protocol with the same code:
// a Server's and a Transport's Protocols are all that differ.

// h1Protocols is HTTP/1.1 only, as a Transport or Server has by default.
func h1Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	return p
}

// h2cClientProtocols makes a Transport speak HTTP/2 with prior knowledge
// on http:// URLs: no upgrade, one multiplexed connection per host.
func h2cClientProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	return p
}

// h2cServerProtocols makes a Server accept both HTTP/1.1 and h2c with
// prior knowledge on the same port.
func h2cServerProtocols() *http.Protocols {
	p := h1Protocols()
	p.SetUnencryptedHTTP2(true)
	return p
}

// h2cTuning is what the bare-h2c-tuned system changes from net/http's
// HTTP/2 defaults, for large values: frames of up to 1 MiB (the default
// is 16 KiB, so a 1 MiB value is 64 DATA frames, each a write of its own
// on the server) and the largest flow-control windows net/http accepts.
func h2cTuning() *http.HTTP2Config {
	return &http.HTTP2Config{
		MaxReadFrameSize:              1 << 20,
		MaxReceiveBufferPerConnection: 4<<20 - 1,
		MaxReceiveBufferPerStream:     4<<20 - 1,
	}
}

// protoCounter wraps a handler and counts the requests it sees over
// HTTP/2, so that a benchmark can check which protocol it measured (one
// atomic add per request, the same for every system).
type protoCounter struct {
	h       http.Handler
	all, h2 atomic.Int64 // requests but memory-only ones
	memory  atomic.Int64 // memory-only requests

	// Tests only (nil in benchmarks): the callers' addresses, one per
	// connection, with their request counts, and the keys asked for,
	// each with its count, since the test began.
	mu     sync.Mutex
	conns  map[string]int
	keys   map[string]int
	writes int // requests other than GET
}

func (p *protoCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Geecache-Peer") == "memory" {
		// A memory-only request (adapters/PROTOCOL.md): an owner's
		// handoff ask to the key's previous owner before it loads, in
		// the 30 s after a node starts; its deadline is short (100
		// ms), so on a loaded machine it may reach the server after
		// the load that caused it. Not one of the Gets' requests.
		p.memory.Add(1)
		p.h.ServeHTTP(w, r)
		return
	}
	p.all.Add(1)
	if r.ProtoMajor == 2 {
		p.h2.Add(1)
	}
	p.mu.Lock()
	if p.conns != nil {
		p.conns[r.RemoteAddr]++
	}
	if p.keys != nil {
		// Both the bare server's path and GeeCache's end in the
		// escaped key ("/" escaped too).
		ep := r.URL.EscapedPath()
		key, err := url.PathUnescape(ep[strings.LastIndexByte(ep, '/')+1:])
		if err != nil {
			key = ep
		}
		p.keys[key]++
		if r.Method != http.MethodGet {
			p.writes++
		}
	}
	p.mu.Unlock()
	p.h.ServeHTTP(w, r)
}

// asked counts a request for key (framed servers, which have no URL).
func (p *protoCounter) asked(addr, key string) {
	p.all.Add(1)
	p.mu.Lock()
	if p.conns != nil {
		p.conns[addr]++
	}
	if p.keys != nil {
		p.keys[key]++
	}
	p.mu.Unlock()
}

// muxTarget is a target of the study and the counters of its servers.
type muxTarget struct {
	*httpTarget
	h2c      bool
	framed   bool // the framed protocol of framed_test.go, not HTTP
	counters []*protoCounter

	// peerRequests, if not nil, counts the requests served instead of
	// the counters (which then see only the upgrades): geecache-multiplex.
	peerRequests func() int64
}

// keysAsked is how many times the servers were asked for each key since
// trackKeys, nil if the system's servers cannot tell (geecache-multiplex:
// its counters see only the upgrades).
func (m *muxTarget) keysAsked() map[string]int {
	if m.peerRequests != nil {
		return nil
	}
	asked := map[string]int{}
	for _, c := range m.counters {
		c.mu.Lock()
		for k, n := range c.keys {
			asked[k] += n
		}
		c.mu.Unlock()
	}
	return asked
}

// trackKeys makes the counters record the keys asked for (tests only).
func (m *muxTarget) trackKeys() {
	for _, c := range m.counters {
		c.mu.Lock()
		c.keys = map[string]int{}
		c.mu.Unlock()
	}
}

// served is how many requests the servers saw, and how many over HTTP/2.
func (m *muxTarget) served() (all, h2 int64) {
	if m.peerRequests != nil {
		return m.peerRequests(), 0
	}
	for _, c := range m.counters {
		all += c.all.Load()
		h2 += c.h2.Load()
	}
	return all, h2
}

// newBareServerProto is newBareServerOf's server and client over HTTP/1.1
// or, with h2c, over HTTP/2 cleartext; tuned sets h2cTuning on both ends.
func newBareServerProto(tb testing.TB, value func(key string) []byte, h2c, tuned bool) *muxTarget {
	s := &bareServer{ln: listenLoopback(tb), done: make(chan struct{})}
	s.base = "http://" + s.ln.Addr().String() + "/k/"
	pc := &protoCounter{h: bareHandler(value)}
	s.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: pc, Protocols: h1Protocols()}
	s.tr = &http.Transport{MaxIdleConnsPerHost: 2 * httpClients, IdleConnTimeout: 90 * time.Second}
	if h2c {
		s.srv.Protocols = h2cServerProtocols()
		s.tr.Protocols = h2cClientProtocols()
	}
	if tuned {
		s.srv.HTTP2, s.tr.HTTP2 = h2cTuning(), h2cTuning()
	}
	s.hc = &http.Client{Transport: s.tr}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(s.ln)
	}()
	tb.Cleanup(func() {
		_ = s.srv.Close()
		<-s.done
		s.tr.CloseIdleConnections()
	})
	return &muxTarget{httpTarget: s.target(), h2c: h2c, counters: []*protoCounter{pc}}
}

// newOurClusterProto is newOurClusterOf's three nodes with the nethttp
// binding's defaults (nethttp.NewTransport, nethttp.NewServer), over
// HTTP/1.1 or, with h2c, with every node's Server accepting h2c and its
// Pool's Transport speaking it (PoolOptions.Transport).
func newOurClusterProto(tb testing.TB, n int, budget int64, g getter.Getter, h2c bool) (*ourCluster, *muxTarget) {
	c := &ourCluster{}
	var addrs []string
	for range n {
		ln := listenLoopback(tb)
		addrs = append(addrs, "http://"+ln.Addr().String())
		c.nodes = append(c.nodes, &ourNode{ln: ln, done: make(chan struct{})})
	}
	m := &muxTarget{h2c: h2c}
	for i, nd := range c.nodes {
		tr := nethttp.NewTransport()
		srvProto := h1Protocols()
		if h2c {
			tr.Protocols, srvProto = h2cClientProtocols(), h2cServerProtocols()
		}
		nd.pool, nd.reg, nd.group = newGeeNodeOpts(tb, addrs[i], addrs, httpGroup, budget, g,
			&nethttp.PoolOptions{Logger: quietLog(), Transport: tr})
		pc := &protoCounter{h: nd.pool}
		m.counters = append(m.counters, pc)
		nd.srv = nethttp.NewServer("", pc, nil)
		nd.srv.Protocols = srvProto
		go func() {
			defer close(nd.done)
			_ = nd.srv.Serve(nd.ln)
		}()
		tb.Cleanup(tr.CloseIdleConnections)
	}
	tb.Cleanup(c.close)
	m.httpTarget = c.target()
	return c, m
}

// muxSystem is remoteSystem with a check, after each block, that every
// request the servers saw in it went over the protocol the system names.
func muxSystem(b *testing.B, name string, t *muxTarget, round *atomic.Int64, c remoteCase) fair.System {
	s := remoteSystem(b, name, t.httpTarget, round, c)
	run := s.Run
	var gets, served int64 // all blocks so far
	s.Run = func(n int) fair.Metrics {
		all0, h20 := t.served()
		m := run(n)
		all, h2 := t.served()
		all, h2 = all-all0, h2-h20
		gets, served = gets+int64(n), served+all
		if err := checkServed(n, all, int64(m["hedges/1k-req"]*float64(n)/1000+0.5), gets, served); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		if want := map[bool]int64{true: all, false: 0}[t.h2c]; h2 != want {
			b.Fatalf("%s: %d of %d requests over HTTP/2, want %d", name, h2, all, want)
		}
		return m
	}
	return s
}

// checkServed checks the requests the servers saw in a load of n Gets of
// fresh remote keys (all, with hedges the hedges it started) and in all
// loads of the system so far (served for gets Gets), against what the
// cluster promises: each Get sends at most one request to its key's
// owner, and only a Get whose fetch was hedged may return before its
// request reached the owner (a hedge that won: the fetch may still be
// queued on a loaded machine, and reach the owner in a later load, or
// never). So a load sees n - hedges requests or more, and the loads
// together never more than their Gets; an exact count of one load would
// depend on when the late requests of hedged fetches arrive.
func checkServed(n int, all, hedges, gets, served int64) error {
	if all+hedges < int64(n) {
		return fmt.Errorf("the servers saw %d requests for %d Gets (%d hedges)", all, n, hedges)
	}
	if served > gets {
		return fmt.Errorf("the servers saw %d requests for %d Gets in all loads so far", served, gets)
	}
	return nil
}

// muxCases are the comparisons of the study, by sub-benchmark name.
var muxCases = []struct {
	name string
	c    remoteCase
}{
	{"c64", remoteCase{clients: httpClients, valueLen: hitValueLen}},
	{"c1", remoteCase{clients: 1, valueLen: hitValueLen}},
	{"1MiB-c64", remoteCase{clients: httpClients, valueLen: largeValueLen, ownerWarm: true}},
	{"1MiB-c1", remoteCase{clients: 1, valueLen: largeValueLen, ownerWarm: true}},
}

// muxSystems names the systems of the study, in the order muxTargets
// returns them.
var muxSystems = []string{"bare-h1", "bare-h2c", "bare-h2c-tuned", "bare-framed", "geecache-h1", "geecache-h2c", "geecache-framed", "geecache-mux", "geecache-multiplex"}

// muxTargets returns the systems of the study for values of
// valueLen bytes, in the order they are reported.
func muxTargets(tb testing.TB, valueLen int) (names []string, targets []*muxTarget) {
	budget, g, value := int64(httpBudget), cheapGetter, hitValue
	if valueLen == largeValueLen {
		budget, g, value = largeBudget, largeGetter, func(string) []byte { return largeValue() }
	}
	_, gee1 := newOurClusterProto(tb, 3, budget, g, false)
	_, gee2 := newOurClusterProto(tb, 3, budget, g, true)
	return muxSystems, []*muxTarget{
		newBareServerProto(tb, value, false, false), newBareServerProto(tb, value, true, false),
		newBareServerProto(tb, value, true, true), newFramedTarget(tb, value), gee1, gee2,
		newOurFramedCluster(tb, 3, budget, g), newOurMuxCluster(tb, 3, budget, g),
		newOurMultiplexCluster(tb, 3, budget, g),
	}
}

// BenchmarkMux compares, in alternating blocks (package fair, baseline
// bare-h1), remote Gets over HTTP/1.1 keep-alive and over HTTP/2
// cleartext with one multiplexed connection per peer:
//
//   - bare-h1, bare-h2c: a bare net/http server and client (BenchmarkRemoteFetch's
//     bare-nethttp), over each protocol; bare-h2c-tuned with h2cTuning
//     (1 MiB frames, the largest windows) on both ends;
//   - bare-framed: the bare framed binary protocol of framed_test.go, one
//     TCP connection, no HTTP (the floor of a transport of that kind);
//   - geecache-framed: the GeeCache cluster with peers over that framed
//     protocol (no protocol semantics: what GeeCache's own per-request
//     costs leave of the transport's gain);
//   - geecache-mux: the GeeCache cluster, nethttp client and handler
//     unchanged, their HTTP requests carried as frames over one upgraded
//     connection per peer (muxrt_test.go: the design of a multiplexed
//     option of the binding, with every protocol semantic);
//   - geecache-multiplex: the same, built: PoolOptions.Multiplex on
//     every node (muxbuilt_test.go);
//   - geecache-h1, geecache-h2c: node A of a three-node GeeCache cluster
//     (nethttp Pool, NewServer, NewTransport, defaults but NoHedge as in
//     BenchmarkRemoteFetch), over each protocol.
//
// Cases: c64 and c1 (64 and 1 clients, 64-byte values the owner loads),
// 1MiB-c64 and 1MiB-c1 (1 MiB values already in the owners' memory; run
// with -benchtime=200x). Every block checks that the servers saw each
// request over the protocol the system names. Metrics as in
// BenchmarkRemoteFetch; requests per second are 1e9 / ns/op, so a
// throughput ratio is the inverse of the time ratio.
func BenchmarkMux(b *testing.B) {
	var round atomic.Int64
	for _, mc := range muxCases {
		b.Run(mc.name, func(b *testing.B) {
			names, targets := muxTargets(b, mc.c.valueLen)
			var systems []fair.System
			for i, t := range targets {
				systems = append(systems, muxSystem(b, names[i], t, &round, mc.c))
			}
			ratios := []string{"p50-ns"}
			if mc.c.valueLen == largeValueLen {
				ratios = append(ratios, "B/op")
			}
			fair.Run(b, fair.Options{Baseline: "bare-h1", Mem: true, GC: true, CPU: true, Ratios: ratios}, systems...)
		})
	}
}

// BenchmarkMuxProfile runs one system of BenchmarkMux alone, one block of
// b.N requests, for a CPU or memory profile of that system only:
//
//	go test -run='^$' -bench='MuxProfile/bare-h2c/c64$' -benchtime=60000x -cpuprofile=cpu.out
//
// Its times are not a comparison.
func BenchmarkMuxProfile(b *testing.B) {
	var round atomic.Int64
	for _, sys := range muxSystems {
		for _, mc := range muxCases {
			b.Run(sys+"/"+mc.name, func(b *testing.B) {
				var t *muxTarget
				h2c := strings.Contains(sys, "h2c")
				if sys == "bare-framed" {
					value := hitValue
					if mc.c.valueLen == largeValueLen {
						value = func(string) []byte { return largeValue() }
					}
					t = newFramedTarget(b, value)
				} else if strings.HasPrefix(sys, "bare") {
					value := hitValue
					if mc.c.valueLen == largeValueLen {
						value = func(string) []byte { return largeValue() }
					}
					t = newBareServerProto(b, value, h2c, strings.HasSuffix(sys, "-tuned"))
				} else {
					budget, g := int64(httpBudget), cheapGetter
					if mc.c.valueLen == largeValueLen {
						budget, g = largeBudget, largeGetter
					}
					switch sys {
					case "geecache-framed":
						t = newOurFramedCluster(b, 3, budget, g)
					case "geecache-mux":
						t = newOurMuxCluster(b, 3, budget, g)
					case "geecache-multiplex":
						t = newOurMultiplexCluster(b, 3, budget, g)
					default:
						_, t = newOurClusterProto(b, 3, budget, g, h2c)
					}
				}
				s := muxSystem(b, sys, t, &round, mc.c)
				s.Prepare(b.N)
				b.ReportAllocs()
				b.ResetTimer()
				m := s.Run(b.N)
				b.StopTimer()
				b.ReportMetric(m["cpu-ns/op"], "cpu-ns/op")
				b.ReportMetric(m["conns/1k-req"], "conns/1k-req")
				t.closeIdle()
			})
		}
	}
}

// TestMuxHarness runs a short load of every system of BenchmarkMux, both
// value sizes, and checks every answer, the protocol each request went
// over, that GeeCache's asked node fetched each key from a peer, and, on a
// warm client, over how many connections the requests came: an h2c client
// uses one per peer whatever the number of clients (64 here), an HTTP/1.1
// pool about one per client.
func TestMuxHarness(t *testing.T) {
	var round atomic.Int64
	for _, valueLen := range []int{hitValueLen, largeValueLen} {
		n := 2 * httpClients
		if valueLen == largeValueLen {
			n = 16
		}
		names, targets := muxTargets(t, valueLen)
		for i, tg := range targets {
			name := fmt.Sprintf("%s/%dB", names[i], valueLen)
			tg.trackKeys()
			var gets, served int64    // both loads
			ours := map[string]bool{} // the keys of both loads
			// The first load warms the client: on a cold h2c
			// Transport every waiting request dials, and all
			// connections but one are closed once they are up.
			for load := range 2 {
				keys := remoteKeys(tg.httpTarget, &round, n)
				if err := tg.warmOwners(t.Context(), keys); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for _, c := range tg.counters {
					c.mu.Lock()
					c.conns = map[string]int{}
					c.mu.Unlock()
				}
				all0, h20 := tg.served()
				res := httpLoad(tg.httpTarget, keys, httpClients, valueLen)
				all, h2 := tg.served()
				all, h2 = all-all0, h2-h20
				gets, served = gets+int64(n), served+all
				for _, k := range keys {
					ours[k] = true
				}
				if res.failed > 0 {
					t.Errorf("%s: %d of %d requests failed; first: %v", name, res.failed, n, res.firstErr)
				}
				if res.peerErrors != 0 {
					t.Errorf("%s: %d remote fetches failed and were loaded locally", name, res.peerErrors)
				}
				if err := checkServed(n, all, res.hedges, gets, served); err != nil {
					t.Errorf("%s, load %d: %v", name, load, err)
				}
				if asked := tg.keysAsked(); asked != nil {
					// By key, where the servers can tell: the
					// same promise, whenever a late request came.
					unasked := 0
					for _, k := range keys {
						if asked[k] == 0 {
							unasked++
						}
					}
					if int64(unasked) > res.hedges {
						t.Errorf("%s, load %d: %d keys never reached their owner, %d hedges", name, load, unasked, res.hedges)
					}
					for k, c := range asked {
						if c > 1 || !ours[k] {
							t.Errorf("%s, load %d: the servers were asked %d times for key %q (one of the loads' keys: %t)", name, load, c, k, ours[k])
						}
					}
				}
				if want := map[bool]int64{true: all, false: 0}[tg.h2c]; h2 != want {
					t.Errorf("%s: %d of %d requests over HTTP/2, want %d", name, h2, all, want)
				}
				conns := 0
				for _, c := range tg.counters {
					c.mu.Lock()
					conns += len(c.conns)
					c.conns = nil
					c.mu.Unlock()
				}
				peers := max(len(tg.counters)-1, 1) // node A has two peers; the bare client one
				if load == 1 && (tg.h2c || tg.framed) && conns > peers {
					t.Errorf("%s: warm multiplexed client: requests came over %d connections for %d peers", name, conns, peers)
				}
				if tg.forget != nil {
					// Dropping a block's values must not reach
					// the servers (a cluster Remove would, and
					// retry into the next block). Counted by
					// kind, not by number: a hedged fetch's GET
					// may still arrive now.
					tg.forget(keys)
					for _, c := range tg.counters {
						c.mu.Lock()
						if c.writes != 0 {
							t.Errorf("%s: the servers saw %d writes (forgetting the keys must send none)", name, c.writes)
						}
						c.mu.Unlock()
					}
				}
				t.Logf("%s, load %d: %d requests, %d over HTTP/2, over %d connections, %d accepted", name, load, all, h2, conns, res.conns)
			}
			tg.closeIdle()
		}
	}
}
