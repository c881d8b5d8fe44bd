package cache_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/peertest"
	"github.com/geecache/geecache/internal/testkit"
)

// The tests in this file run in a synctest bubble: time is virtual, so the
// hedge delay, a slow source and a hung peer are exact, and asserting on
// how long a Get took (in virtual time) is asserting on the design.

// settleBubble lets the goroutines a group leaves behind (idle load
// workers, fetches a hedge beat) end, as a bubble requires before it
// returns.
func settleBubble() {
	time.Sleep(time.Minute)
	synctest.Wait()
}

// newSlowCluster is an in-memory cluster of three nodes (see memPicker)
// whose source takes loadTime per key and knows the keys in db. Its peers
// hand the caller's PeerReply to the owner's ServePeer, as the net/http
// binding carries a 102 Processing back: the owner's "loading" reaches the
// asking node.
func newSlowCluster(t *testing.T, db map[string]string, loadTime time.Duration, policy cache.PeerPolicy) []*memNode {
	t.Helper()
	nodes := make([]*memNode, 3)
	for i := range nodes {
		nodes[i] = &memNode{name: fmt.Sprintf("node%d", i)}
	}
	for i, n := range nodes {
		src := getter.Func(func(ctx context.Context, key string) ([]byte, error) {
			n.loads.Add(1)
			select {
			case <-time.After(loadTime):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if v, ok := db[key]; ok {
				return []byte(v), nil
			}
			return nil, fmt.Errorf("%s not exist: %w", key, getter.ErrNotFound)
		})
		n.reg = cache.NewRegistry()
		g, err := n.reg.NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: memPicker{i, nodes}, Logger: quiet,
			PeerPolicy: policy})
		if err != nil {
			t.Fatal(err)
		}
		n.group = g
	}
	return nodes
}

func totalLoads(nodes []*memNode) (n int64) {
	for _, m := range nodes {
		n += m.loads.Load()
	}
	return n
}

// A slow source behind a live owner is loaded once in the whole cluster,
// on a cold cluster (no latency seen yet) and on a warm one (where the
// hedge delay has dropped to HedgeMin): the owner says it is loading, and a
// hedge is for a peer that does not answer.
func TestSlowSourceLoadsOncePerCluster(t *testing.T) {
	for _, warm := range []bool{false, true} {
		t.Run(fmt.Sprintf("warm=%v", warm), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				db := map[string]string{"a-cold": "v"}
				for i := range 16 {
					db[fmt.Sprint("a-warm", i)] = "w"
				}
				nodes := newSlowCluster(t, db, 300*time.Millisecond, cache.PeerPolicy{})
				ctx := t.Context()
				if warm { // node1 and node2 read keys node0 holds: fast fetches
					for i := range 16 {
						if _, err := nodes[0].group.Get(ctx, fmt.Sprint("a-warm", i)); err != nil {
							t.Fatal(err)
						}
					}
					for _, n := range nodes[1:] {
						for i := range 16 {
							if _, err := n.group.Get(ctx, fmt.Sprint("a-warm", i)); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				before := totalLoads(nodes)
				var wg sync.WaitGroup
				for i := range 9 {
					n := nodes[i%3]
					wg.Go(func() {
						if v, err := n.group.Get(ctx, "a-cold"); err != nil || v.String() != "v" {
							t.Errorf("%s: Get = %q, %v", n.name, v, err)
						}
					})
				}
				wg.Wait()
				if got := totalLoads(nodes) - before; got != 1 {
					t.Fatalf("9 concurrent Gets of a cold key over 3 nodes loaded it %d times; want 1", got)
				}
				for _, n := range nodes[1:] {
					if s := n.group.Stats(); s.Hedges != 0 {
						t.Fatalf("%s hedged %d times a live owner loading from a slow source", n.name, s.Hedges)
					}
				}
				settleBubble()
			})
		})
	}
}

// A Get of a key owned by a hung peer returns after the hedge delay and
// the local load, a missing key as soon as a present one: "not found" from
// the source is as final as the owner's. With no fetch seen yet the delay
// is at most 100 ms. The fetches the hedges beat fail at SlowAfter, and
// eject the peer.
func TestHungOwnerCostsTheHedgeDelayOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &fakePeer{}
		p.mode.Store(peerHangs)
		src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
			if strings.HasPrefix(key, "missing") {
				return nil, getter.ErrNotFound
			}
			return []byte("local:" + key), nil
		})
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: allRemote{p}, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		// A 10 s deadline stands for the transport's timeout.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		timed := func(key string) (cache.ByteView, time.Duration, error) {
			start := time.Now()
			v, err := g.Get(ctx, key)
			return v, time.Since(start), err
		}
		v, present, err := timed("present")
		if err != nil || v.String() != "local:present" {
			t.Fatalf("Get(present) = %q, %v; want the local load", v, err)
		}
		if present > 100*time.Millisecond {
			t.Fatalf("the first Get to a hung peer waited %v; want at most 100 ms", present)
		}
		for i := range 3 {
			_, missing, err := timed(fmt.Sprint("missing", i))
			if !errors.Is(err, getter.ErrNotFound) {
				t.Fatalf("Get(missing) = %v; want ErrNotFound", err)
			}
			if missing > present {
				t.Fatalf("a missing key owned by a hung peer took %v, a present one %v", missing, present)
			}
		}
		time.Sleep(2 * time.Second) // PeerPolicy.SlowAfter's documented default
		synctest.Wait()
		if s := g.Stats(); len(s.Peers) != 1 || !s.Peers[0].Ejected {
			t.Fatalf("after SlowAfter: %+v; want the hung peer ejected", s.Peers)
		}
		if _, d, err := timed("missing-after"); !errors.Is(err, getter.ErrNotFound) || d != 0 {
			t.Fatalf("Get(missing) with the peer ejected = %v after %v; want ErrNotFound at once", err, d)
		}
		settleBubble()
	})
}

// stoppedOwner answers a read of one key by saying it is loading, and
// then never a word more, as an owner stopped (SIGSTOP) in the middle of a
// load; it cannot carry anything else.
type stoppedOwner struct{ *peerFunc }

func (stoppedOwner) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	if (req.Op != cache.OpGet && req.Op != cache.OpPeek) || len(req.Keys) != 1 {
		return peertest.ErrReadOnly
	}
	reply.Loading()
	<-ctx.Done()
	return ctx.Err()
}

// An owner that said it is loading and then stopped (a SIGSTOP in the
// middle of a load) costs a Get HedgeMax at most: then the node loads the
// key itself.
func TestOwnerThatStopsWhileLoadingCostsHedgeMax(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stoppedOwner{&peerFunc{}} // a pointer inside: the group tells peers apart
		src := getter.Func(func(_ context.Context, key string) ([]byte, error) { return []byte("local:" + key), nil })
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: allRemote{p}, Logger: quiet,
			PeerPolicy: cache.PeerPolicy{SlowAfter: time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		v, err := g.Get(ctx, "k")
		if err != nil || v.String() != "local:k" {
			t.Fatalf("Get = %q, %v; want the local load", v, err)
		}
		const hedgeMax = time.Second // PeerPolicy.HedgeMax's documented default
		if d := time.Since(start); d != hedgeMax {
			t.Fatalf("Get waited %v for an owner that stopped while loading; want HedgeMax (%v)", d, hedgeMax)
		}
		settleBubble()
	})
}

// A Peer that panics is a failed peer: the key loads locally, and
// the panic is logged with its stack.
func TestPeerPanicIsLoggedWithItsStack(t *testing.T) {
	for _, noHedge := range []bool{false, true} {
		var logs testkit.Buffer
		p := &peerFunc{func(context.Context, string) ([]byte, error) { panic("peer bug") }}
		src := getter.Func(func(_ context.Context, key string) ([]byte, error) { return []byte("local:" + key), nil })
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: allRemote{p},
			Logger: slog.New(slog.NewTextHandler(&logs, nil)), PeerPolicy: cache.PeerPolicy{NoHedge: noHedge}})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := g.Get(t.Context(), "k"); err != nil || v.String() != "local:k" {
			t.Fatalf("noHedge=%v: Get = %q, %v; want the local load", noHedge, v, err)
		}
		testkit.WaitFor(t, "the log line", func() bool { return strings.Contains(logs.String(), "peer bug") })
		if out := logs.String(); !strings.Contains(out, "hedge_test.go") || !strings.Contains(out, "goroutine") {
			t.Fatalf("noHedge=%v: log %q; want the panic's stack", noHedge, out)
		}
	}
}

// A Getter that calls runtime.Goexit (as t.FailNow does) gives Get an
// ErrGetterPanic error, with a context that can be cancelled and with one
// that cannot: Get returns on the caller's goroutine either way.
func TestGetterGoexitReturns(t *testing.T) {
	for _, ctx := range []context.Context{context.Background(), t.Context()} {
		src := getter.Func(func(context.Context, string) ([]byte, error) { runtime.Goexit(); return nil, nil })
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			_, err := g.Get(ctx, "k")
			got <- err
		}()
		<-ended
		if len(got) == 0 {
			t.Fatalf("ctx %v: the Getter's runtime.Goexit ended the caller's goroutine inside Get", ctx)
		}
		if err := <-got; !errors.Is(err, cache.ErrGetterPanic) {
			t.Fatalf("ctx %v: Get = %v; want ErrGetterPanic", ctx, err)
		}
	}
}
