package nethttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
)

// startHungPeer starts a fake peer that reads requests and never answers,
// as a stopped (SIGSTOP) process whose kernel still accepts would, and
// counts the requests that reach it.
func startHungPeer(t *testing.T) (*fakePeer, *atomic.Int64) {
	t.Helper()
	var requests atomic.Int64
	return startFakePeer(t, func(*http.Request, net.Conn) bool {
		requests.Add(1)
		return false // no answer: wait for the client to close
	}), &requests
}

// A peer that accepts and never answers: every Get is answered (by the
// hedge's local load), the peer is ejected after EjectAfter slow fetches,
// and then no request reaches it at all; nothing leaks (goleak).
func TestHungPeerIsHedgedAndEjected(t *testing.T) {
	hung, requests := startHungPeer(t)
	src := &db{calls: map[string]int{}}
	reg := cache.NewRegistry()
	pool, err := NewPool("", reg, &PoolOptions{Logger: slog.New(slog.DiscardHandler)}) // a client only: owns no key
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	mustSet(t, pool, hung.addr) // every key is owned by the hung peer
	g, err := reg.NewGroup("scores", 1<<20, src, &cache.GroupOptions{Peers: pool, Logger: slog.New(slog.DiscardHandler),
		PeerPolicy: cache.PeerPolicy{EjectAfter: 3, EjectFor: time.Hour, HedgeMin: time.Millisecond, HedgeMax: time.Millisecond,
			SlowAfter: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	get := func(i int) {
		t.Helper()
		k := fmt.Sprint("key-", i)
		v, err := g.Get(ctx, k)
		if err != nil || v.String() != "v:"+k {
			t.Fatalf("Get(%q) = %q, %v", k, v, err)
		}
	}
	// Every Get is answered by its hedge until the peer is ejected (the
	// fetches the hedges beat fail after SlowAfter). Bounded: 10 s.
	deadline := time.Now().Add(10 * time.Second)
	i := 0
	for s := g.Stats(); len(s.Peers) == 0 || !s.Peers[0].Ejected; s = g.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("the hung peer was not ejected: %+v", s)
		}
		get(i)
		i++
		time.Sleep(time.Millisecond)
	}
	// Ejected: Gets are loaded here at once, without asking it.
	before := g.Stats()
	for j := range 100 {
		get(i + j)
	}
	s := g.Stats()
	if s.EjectedLoads-before.EjectedLoads != 100 || s.Hedges != before.Hedges || s.PeerErrors != 0 {
		t.Fatalf("after the ejection: %+v; want 100 loads without a fetch, no hedge, no error seen by a caller", s)
	}
	waitFor(t, "the fetches the hedges beat to end", func() bool { return g.Stats().Peers[0].InFlight == 0 })
	if n := requests.Load(); n > s.Hedges {
		t.Fatalf("the hung peer got %d requests; want at most the %d hedged fetches", n, s.Hedges)
	}
}

// A peer that crashes and comes back: while it is gone its keys are loaded
// locally, and after it restarts (on the same address) and the ejection
// ends, a probe brings it back and its keys are fetched from it again.
func TestPeerCrashAndRestart(t *testing.T) {
	nodes := startNodes(t, 2, true, nil)
	a, b := nodes[0], nodes[1]
	var keys []string
	for i := 0; len(keys) < 20; i++ {
		if k := "k" + string(rune('a'+i%26)) + string(rune('a'+i/26)); owner(nodes, k) == b {
			keys = append(keys, k)
		}
	}
	ctx := context.Background()
	b.kill()
	for _, k := range keys[:10] {
		if v, err := a.group.Get(ctx, k); err != nil || v.String() != "v:"+k {
			t.Fatalf("with b down: Get(%q) = %q, %v", k, v, err)
		}
	}
	if s := a.group.Stats(); s.Peers[0].Ejections == 0 {
		t.Fatalf("b was not ejected: %+v", s.Peers)
	}
	// b restarts on its address (its memory is empty, as after a crash).
	ln, err := net.Listen("tcp", b.addr[len("http://"):])
	if err != nil {
		t.Skipf("b's port was taken meanwhile: %v", err)
	}
	srv := NewServer("", b.pool, nil)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close(); <-done }()
	// The ejection lasts at most 1.25 s by default; after it, keys of b
	// come from b again. Bounded: at most 10 s of Gets.
	deadline := time.Now().Add(10 * time.Second)
	for b.db.count(keys[15]) == 0 && time.Now().Before(deadline) {
		a.group.RemoveLocal(keys[15])
		if v, err := a.group.Get(ctx, keys[15]); err != nil || v.String() != "v:"+keys[15] {
			t.Fatalf("Get = %q, %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if b.db.count(keys[15]) == 0 {
		t.Fatal("b was never asked again after it restarted")
	}
	if s := a.group.Stats(); s.Peers[0].Ejected {
		t.Fatalf("b is still ejected after answering: %+v", s.Peers)
	}
}

// A node built with NewServer closes connections whose requests trickle in
// (a slow-loris caller) once its ReadTimeout passes, and meanwhile answers
// its peers.
func TestSlowRequestsAreCutOff(t *testing.T) {
	nodes := startNodes(t, 1, true, nil)
	n := nodes[0]
	srv := NewServer("", n.pool, nil)
	srv.ReadHeaderTimeout, srv.ReadTimeout = 200*time.Millisecond, 200*time.Millisecond // short, for the test
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close(); <-done }()

	const slow = 200
	conns := make([]net.Conn, 0, slow)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range slow {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		// Half a request line, then nothing.
		if _, err := io.WriteString(c, "GET /_geecache/scores/k HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// A peer is still answered while they hang on.
	c := mustClient(t, "http://"+ln.Addr().String(), nil)
	defer c.CloseIdleConnections()
	if v, _, err := c.Get(context.Background(), "scores", "Tom"); err != nil || string(v) != "v:Tom" {
		t.Fatalf("peer request during the slow ones: %q, %v", v, err)
	}
	// Every slow connection is closed by the server (a read sees EOF or a
	// reset), within a bounded wait.
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.ReadAll(c)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("slow connection %d still open after 10 s", i)
		}
	}
}

// Remove and Set toward a peer that hangs and one that lies (a 200 without
// the protocol's checksum): the call ends with the caller's deadline, and
// its UpdateError names both peers with their failures; nothing is left
// running (goleak).
func TestWritesToBadPeers(t *testing.T) {
	hung, _ := startHungPeer(t)
	liar := startFakePeer(t, rawAnswer("HTTP/1.1 200 OK\nContent-Length: 3", []byte("yes"), false))
	reg := cache.NewRegistry()
	pool, err := NewPool("", reg, &PoolOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	mustSet(t, pool, hung.addr, liar.addr)
	defer mustSet(t, pool) // the background retries toward the two peers end with them
	g, err := reg.NewGroup("scores", 1<<20, &db{calls: map[string]int{}}, &cache.GroupOptions{Peers: pool, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// A key the liar owns, which answers at once (with a lie): the hung
	// peer, told beside it, is given its own share of the deadline.
	key := ""
	for i := 0; key == ""; i++ {
		if k := fmt.Sprint("k", i); pool.Owner(k) == liar.addr {
			key = k
		}
	}
	for name, write := range map[string]func(context.Context) error{
		"Remove": func(ctx context.Context) error { return g.Remove(ctx, key) },
		"Set":    func(ctx context.Context) error { return g.Set(ctx, key, []byte("631"), 0) },
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := write(ctx)
		cancel()
		var ue *cache.UpdateError
		if !errors.As(err, &ue) || len(ue.Failed) != 2 {
			t.Fatalf("%s: %v; want an UpdateError naming both peers", name, err)
		}
		if e := ue.Failed[hung.addr]; !errors.Is(e, context.DeadlineExceeded) {
			t.Errorf("%s: the hung peer's failure is %v; want the caller's deadline", name, e)
		}
		if e := ue.Failed[liar.addr]; !errors.Is(e, cache.ErrIntegrity) {
			t.Errorf("%s: the lying peer's failure is %v; want ErrIntegrity", name, e)
		}
	}
}
