package cache_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// versioned is a source whose values carry a version that the test bumps,
// and which can be made to fail or to block.
type versioned struct {
	version atomic.Int64
	loads   atomic.Int64
	fail    atomic.Bool
	block   chan struct{} // if not nil, loads wait for it
	ttl     time.Duration
}

func (s *versioned) GetTTL(ctx context.Context, key string) ([]byte, time.Duration, error) {
	s.loads.Add(1)
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	if s.fail.Load() {
		return nil, 0, errors.New("source down")
	}
	if key == "missing" {
		return nil, 0, getter.ErrNotFound
	}
	return []byte(key + "@" + string(rune('0'+s.version.Load()))), s.ttl, nil
}

func (s *versioned) Get(ctx context.Context, key string) ([]byte, error) {
	v, _, err := s.GetTTL(ctx, key)
	return v, err
}

// newFreshGroup is a group for a test in a synctest bubble, whose clock the
// test moves with time.Sleep.
func newFreshGroup(t *testing.T, src getter.Getter, o cache.GroupOptions) *cache.Group {
	t.Helper()
	t.Cleanup(settleBubble)
	o.Logger = quiet
	g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustGet(t *testing.T, g *cache.Group, key, want string) {
	t.Helper()
	if v, err := g.Get(t.Context(), key); err != nil || v.String() != want {
		t.Fatalf("Get(%q) = %q, %v; want %q", key, v, err, want)
	}
}

func TestValuesExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &versioned{}
		g := newFreshGroup(t, src, cache.GroupOptions{TTL: time.Minute})
		mustGet(t, g, "k", "k@0")
		src.version.Store(1)
		time.Sleep(59 * time.Second)
		mustGet(t, g, "k", "k@0") // still fresh
		time.Sleep(2 * time.Second)
		mustGet(t, g, "k", "k@1") // expired: reloaded
		if src.loads.Load() != 2 {
			t.Fatalf("%d loads, want 2", src.loads.Load())
		}
		// The Getter's own TTL wins over the group's.
		src.ttl = 5 * time.Second
		mustGet(t, g, "other", "other@1")
		src.version.Store(2)
		time.Sleep(6 * time.Second)
		mustGet(t, g, "other", "other@2")
	})
}

func TestNegativeCaching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &versioned{}
		g := newFreshGroup(t, src, cache.GroupOptions{NotFoundTTL: 10 * time.Second})
		for range 100 {
			if _, err := g.Get(t.Context(), "missing"); !errors.Is(err, getter.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		}
		if src.loads.Load() != 1 {
			t.Fatalf("100 Gets of a missing key made %d loads; want 1", src.loads.Load())
		}
		time.Sleep(11 * time.Second)
		_, _ = g.Get(t.Context(), "missing")
		if src.loads.Load() != 2 {
			t.Fatalf("after NotFoundTTL: %d loads; want 2", src.loads.Load())
		}
		// Without NotFoundTTL nothing is cached.
		plain := newFreshGroup(t, src, cache.GroupOptions{})
		_, _ = plain.Get(t.Context(), "missing")
		_, _ = plain.Get(t.Context(), "missing")
		if src.loads.Load() != 4 {
			t.Fatalf("without NotFoundTTL: %d loads; want 4", src.loads.Load())
		}
	})
}

// A peer's "not found" is cached for the lifetime the peer gives it.
func TestNegativeCachingAcrossTheHop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		peer := &ttlPeer{f: func(string) ([]byte, time.Duration, error) {
			calls++
			return nil, 5 * time.Second, getter.ErrNotFound
		}}
		g := newFreshGroup(t, getter.Map(nil), cache.GroupOptions{Peers: allRemote{peer}})
		for range 10 {
			_, _ = g.Get(t.Context(), "missing")
		}
		time.Sleep(6 * time.Second)
		_, err := g.Get(t.Context(), "missing")
		if !errors.Is(err, getter.ErrNotFound) || calls != 2 {
			t.Fatalf("err %v, %d peer calls; want not found, and 2 calls (one per 5 s)", err, calls)
		}
	})
}

type ttlPeer struct {
	f func(key string) ([]byte, time.Duration, error)
}

func (p *ttlPeer) Do(ctx context.Context, req cache.PeerRequest, reply cache.PeerReply) error {
	return answerReads(ctx, req, reply, func(_ context.Context, key string) ([]byte, time.Duration, error) { return p.f(key) })
}

func (*ttlPeer) Addr() string { return "http://ttl-peer" }

// 1,000 concurrent Gets of a key at its expiry, with a stale window: none
// waits for the source (which is blocked), and exactly one refresh runs.
func TestStaleWhileRevalidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &versioned{}
		g := newFreshGroup(t, src, cache.GroupOptions{TTL: time.Minute, StaleWhileRevalidate: time.Hour})
		mustGet(t, g, "k", "k@0")
		src.version.Store(1)
		src.block = make(chan struct{})
		time.Sleep(61 * time.Second)
		var wg sync.WaitGroup
		var wrong atomic.Int64
		for range 1000 {
			wg.Go(func() {
				if v, err := g.Get(t.Context(), "k"); err != nil || v.String() != "k@0" {
					wrong.Add(1)
				}
			})
		}
		wg.Wait() // the source is still blocked: no Get waited for it
		if wrong.Load() != 0 {
			t.Fatalf("%d Gets did not get the stale value at once", wrong.Load())
		}
		testkit.WaitFor(t, "the refresh to reach the source", func() bool { return src.loads.Load() == 2 })
		s := g.Stats()
		if s.StaleServes != 1000 || s.Refreshes != 1 || src.loads.Load() != 2 {
			t.Fatalf("stats %+v, loads %d; want 1000 stale serves and one refresh", s, src.loads.Load())
		}
		close(src.block)
		testkit.WaitFor(t, "the refresh", func() bool { return g.InFlight() == 0 && g.Stats().Main.Items == 1 })
		testkit.WaitFor(t, "the refreshed value", func() bool { v, _ := g.Get(t.Context(), "k"); return v.String() == "k@1" })
	})
}

// A failing refresh leaves the stale value served until the window ends,
// counted; then the error shows. While the source is down, a hot stale key
// is refreshed at most once a second however often it is asked for. (In a
// synctest bubble: time is virtual.)
func TestServeStaleOnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &versioned{}
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Logger: quiet, TTL: 100 * time.Millisecond,
			StaleWhileRevalidate: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, g, "k", "k@0")
		src.fail.Store(true)
		time.Sleep(200 * time.Millisecond)
		// 10 s of Gets, one every millisecond: all served stale.
		for range 10_000 {
			mustGet(t, g, "k", "k@0")
			time.Sleep(time.Millisecond)
		}
		synctest.Wait()
		calls := src.loads.Load() - 1
		if calls < 5 || calls > 11 {
			t.Fatalf("10 s of stale Gets with the source down called it %d times; want one a second (at most 11)", calls)
		}
		if s := g.Stats(); s.Refreshes != calls || s.RefreshFails != calls {
			t.Fatalf("stats %+v; want %d refreshes, all failed", s, calls)
		}
		time.Sleep(time.Minute) // past the window
		if _, err := g.Get(t.Context(), "k"); err == nil {
			t.Fatal("past the stale window a failing source must show")
		}
		time.Sleep(time.Minute)
		synctest.Wait()
	})
}

// A refresh that finds the key gone ends its stale value: "not found" is
// the source's answer, not an outage. With NotFoundTTL the answer is
// cached; without, the next Get asks the source again.
func TestStaleValueEndsWhenTheKeyIsGone(t *testing.T) {
	for _, notFoundTTL := range []time.Duration{0, time.Minute} {
		synctest.Test(t, func(t *testing.T) {
			var gone atomic.Bool
			var loads atomic.Int64
			src := getter.Func(func(context.Context, string) ([]byte, error) {
				loads.Add(1)
				if gone.Load() {
					return nil, getter.ErrNotFound
				}
				return []byte("old"), nil
			})
			g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Logger: quiet, TTL: time.Second,
				StaleWhileRevalidate: time.Hour, NotFoundTTL: notFoundTTL})
			if err != nil {
				t.Fatal(err)
			}
			mustGet(t, g, "k", "old")
			gone.Store(true)
			time.Sleep(2 * time.Second)
			mustGet(t, g, "k", "old") // stale, and a refresh starts
			synctest.Wait()
			for i := range 3 {
				if v, err := g.Get(t.Context(), "k"); !errors.Is(err, getter.ErrNotFound) {
					t.Fatalf("NotFoundTTL %v: Get #%d after the refresh found the key gone = %q, %v; want ErrNotFound", notFoundTTL, i, v, err)
				}
			}
			want := int64(5) // the first load, the refresh, and three Gets
			if notFoundTTL > 0 {
				want = 2 // the "not found" is cached
			}
			if loads.Load() != want {
				t.Fatalf("NotFoundTTL %v: %d loads; want %d", notFoundTTL, loads.Load(), want)
			}
			if s := g.Stats(); s.RefreshFails != 0 {
				t.Fatalf("NotFoundTTL %v: %d refresh failures; want 0: a \"not found\" is an answer", notFoundTTL, s.RefreshFails)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
		})
	}
}

func TestBadTTLOptionsAreRefused(t *testing.T) {
	for _, o := range []cache.GroupOptions{{TTL: -1}, {NotFoundTTL: -1}, {StaleWhileRevalidate: -1}} {
		if _, err := cache.NewRegistry().NewGroup("g", 1, getter.Map(nil), &o); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("%+v: err = %v; want ErrConfig", o, err)
		}
	}
}

// A hit on a value that expires reads the coarse clock: still no
// allocation.
func TestHitWithTTLAllocatesNothing(t *testing.T) {
	g, err := cache.NewRegistry().NewGroup("g", 1<<10, getter.Map(map[string]string{"k": "v"}), &cache.GroupOptions{TTL: time.Hour, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	_, _ = g.Get(ctx, "k")
	if n := testing.AllocsPerRun(100, func() { _, _ = g.Get(ctx, "k") }); n != 0 {
		t.Fatalf("a hit with a TTL allocates %v times", n)
	}
}
