package cache

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/getter"
)

// This file is about a key held in both caches: main's entry expired, hot's
// copy of it fresh, or not (the key changed owners, and this node fetched
// it from the new one). memory.get finds main's entry first; the callers
// must not take it for the key's only one.

// countingSource counts its loads and answers key@N, N the load's number;
// "missing" does not exist.
type countingSource struct{ loads atomic.Int64 }

func (s *countingSource) Get(_ context.Context, key string) ([]byte, error) {
	n := s.loads.Add(1)
	if key == "missing" {
		return nil, getter.ErrNotFound
	}
	return []byte(key + "@" + strconv.FormatInt(n, 10)), nil
}

// reader is a call that answers from memory, as (value, error).
type reader struct {
	name       string
	memoryOnly bool // never loads: no fresh copy is ErrNotHeld
	read       func(ctx context.Context, r *Registry, g *Group, key string) (string, error)
}

// readers are every call that answers from memory: a peer's requests
// through r, which holds g.
func readers() []reader {
	return []reader{
		{"Get", false, func(ctx context.Context, _ *Registry, g *Group, key string) (string, error) {
			v, err := g.Get(ctx, key)
			return v.String(), err
		}},
		{"OpGet", false, func(ctx context.Context, r *Registry, g *Group, key string) (string, error) {
			return servePeer(ctx, r, OpGet, g.Name(), key)
		}},
		{"GetMany", false, func(ctx context.Context, _ *Registry, g *Group, key string) (string, error) {
			return readMany(ctx, g, key)
		}},
		{"OpPeek", true, func(ctx context.Context, r *Registry, g *Group, key string) (string, error) {
			return servePeer(ctx, r, OpPeek, g.Name(), key)
		}},
		{"OpPeek of many keys", true, func(ctx context.Context, r *Registry, g *Group, key string) (string, error) {
			// With a key never held beside it: a request of many keys.
			return servePeer(ctx, r, OpPeek, g.Name(), key, "never-held")
		}},
	}
}

func readMany(ctx context.Context, g *Group, key string) (v string, err error) {
	g.GetMany(ctx, []string{key}, func(_ int, b ByteView, e error) { v, err = b.String(), e })
	return v, err
}

// servePeer has r answer a peer's request of op for keys, and returns its
// answer for keys[0].
func servePeer(ctx context.Context, r *Registry, op PeerOp, group string, keys ...string) (string, error) {
	a := &firstAnswer{}
	if err := r.ServePeer(ctx, PeerRequest{Op: op, Group: group, Keys: keys}, a); err != nil {
		return "", err
	}
	if !a.got {
		return "", errors.New("no answer for the key")
	}
	return a.v, a.err
}

// firstAnswer is a PeerReply that keeps the answer for the request's
// first key.
type firstAnswer struct {
	v   string
	err error
	got bool
}

func (a *firstAnswer) Answer(i int, v ByteView, _ time.Duration, err error) {
	if i == 0 {
		a.v, a.err, a.got = v.String(), err, true
	}
}

func (*firstAnswer) Loading() {}

// expiredInMain returns a group whose main cache holds key (a value, or
// for "missing" a cached "not found") expired, and, if hotTTL is
// positive, whose hot cache holds a copy of it kept for hotTTL when main's
// was kept (hotNotFound: a "not found"). Its source has loaded key once.
func expiredInMain(t *testing.T, key string, hotTTL time.Duration, hotNotFound bool) (*Registry, *Group, *countingSource) {
	t.Helper()
	src := &countingSource{}
	r := NewRegistry()
	g, err := r.NewGroup("g", 1<<20, src, &GroupOptions{TTL: time.Minute, NotFoundTTL: time.Minute,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Get(t.Context(), key); (err != nil) != (key == "missing") {
		t.Fatalf("first Get(%q): %v", key, err)
	}
	if hotTTL > 0 {
		var err error
		if hotNotFound {
			err = getter.ErrNotFound
		}
		g.keep(g.mem.hot, key, []byte(key+"@hot"), hotTTL, err, g.mem.generation(key))
	}
	time.Sleep(time.Minute + time.Second) // main's entry expires
	if _, exp, ok := g.mem.main.Peek(key); !ok || g.fresh.isFresh(exp) {
		t.Fatalf("main holds %q: %v, fresh %v", key, ok, g.fresh.isFresh(exp))
	}
	return r, g, src
}

// settle lets the group's clock stop before its bubble ends.
func settle() {
	time.Sleep(time.Minute)
	synctest.Wait()
}

// TestFreshHotCopyBehindExpiredMain checks that every read serves a fresh
// copy in hot, a value or a cached "not found", when main's entry of the
// key has expired, without a load, as a hit.
func TestFreshHotCopyBehindExpiredMain(t *testing.T) {
	for _, r := range readers() {
		for _, c := range []struct {
			name, key string
			notFound  bool
		}{
			{"value", "k", false},
			{"not found", "missing", true},
			{"value over not found", "missing", false},
			{"not found over value", "k", true},
		} {
			t.Run(r.name+"/"+c.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					defer settle()
					reg, g, src := expiredInMain(t, c.key, time.Hour, c.notFound)
					before, misses := g.Stats(), g.counters.misses.Load()
					v, err := r.read(t.Context(), reg, g, c.key)
					if c.notFound {
						if !errors.Is(err, getter.ErrNotFound) {
							t.Fatalf("read = %q, %v; want the hot copy's not found", v, err)
						}
					} else if err != nil || v != c.key+"@hot" {
						t.Fatalf("read = %q, %v; want %q", v, err, c.key+"@hot")
					}
					if n := src.loads.Load(); n != 1 {
						t.Fatalf("%d loads; want 1 (the first Get's): the fresh copy was there", n)
					}
					if s, m := g.Stats(), g.counters.misses.Load(); m != misses || s.Hot.Hits != before.Hot.Hits+1 ||
						s.Main.Hits != before.Main.Hits {
						t.Fatalf("misses %d -> %d, hot's hits %d -> %d, main's %d -> %d; want a hit of hot's",
							misses, m, before.Hot.Hits, s.Hot.Hits, before.Main.Hits, s.Main.Hits)
					}
				})
			})
		}
	}
}

// TestExpiredEverywhereStillLoads checks that a key whose entries have
// all expired (main's alone, or hot's too, before or after main's) is
// loaded again, or for a memory-only request not held: no expired value
// is served, whichever cache holds it.
func TestExpiredEverywhereStillLoads(t *testing.T) {
	for _, r := range readers() {
		for _, c := range []struct {
			name   string
			hotTTL time.Duration
		}{
			{"main only", 0},
			{"hot expired after main", time.Minute + time.Second/2},
			{"hot expired before main", time.Second},
		} {
			for _, key := range []string{"k", "missing"} {
				t.Run(r.name+"/"+c.name+"/"+key, func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						defer settle()
						reg, g, src := expiredInMain(t, key, c.hotTTL, key == "missing")
						v, err := r.read(t.Context(), reg, g, key)
						want, loads := key+"@2", int64(2)
						if r.memoryOnly {
							loads = 1
							if !errors.Is(err, ErrNotHeld) {
								t.Fatalf("read = %q, %v; want not held", v, err)
							}
						} else if key == "missing" {
							if !errors.Is(err, getter.ErrNotFound) {
								t.Fatalf("read = %q, %v; want not found", v, err)
							}
						} else if err != nil || v != want {
							t.Fatalf("read = %q, %v; want %q, loaded again", v, err, want)
						}
						if n := src.loads.Load(); n != loads {
							t.Fatalf("%d loads; want %d", n, loads)
						}
					})
				})
			}
		}
	}
}

// TestMemoryPeekLaterOfBoth checks that peek, of a key in both caches,
// returns the entry that expires last, and second hot's when it outlives
// the one get returned.
func TestMemoryPeekLaterOfBoth(t *testing.T) {
	m := newMemory(1<<10, false)
	m.add(m.main, "k", []byte("main"), 0, 100, 0)
	m.add(m.hot, "k", []byte("hot"), 0, 200, 0)
	if v, exp, ok := m.peek("k"); !ok || string(v) != "hot" || exp != 200 {
		t.Fatalf("peek = %q, %d, %v; want hot's, which expires last", v, exp, ok)
	}
	for _, c := range []struct {
		now   int64
		fresh bool
	}{{150, true}, {250, false}} {
		v, exp := []byte("main"), int64(100)
		if fresh := m.second("k", &v, &exp, c.now); fresh != c.fresh || string(v) != "hot" || exp != 200 {
			t.Fatalf("second at %d = %q, %d, fresh %v; want hot's, fresh %v", c.now, v, exp, fresh, c.fresh)
		}
	}
	v, exp := []byte("hot"), int64(200) // get's entry was hot's own: it does not outlive itself
	if fresh := m.second("k", &v, &exp, 250); fresh || string(v) != "hot" || exp != 200 {
		t.Fatalf("second of hot's own entry = %q, %d, fresh %v", v, exp, fresh)
	}
	m.add(m.main, "k", []byte("main"), 0, 0, 0) // never expires
	if v, _, _ := m.peek("k"); string(v) != "main" {
		t.Fatalf("peek = %q; want main's, which never expires", v)
	}
}

// TestMemoryDemoteKeepsLaterHotCopy checks that demote, of a key whose
// copy in hot outlives main's entry (which expired), keeps hot's copy and
// drops main's; and moves main's entry when it is the later one.
func TestMemoryDemoteKeepsLaterHotCopy(t *testing.T) {
	m := newMemory(1<<10, false)
	m.add(m.main, "k", []byte("main"), 0, 100, 0)
	m.add(m.hot, "k", []byte("hot"), 0, 200, 0)
	m.demote("k", 150)
	if v, exp, ok := m.hot.Peek("k"); !ok || string(v) != "hot" || exp != 200 {
		t.Fatalf("after demote, hot holds %q, %d, %v; want its own copy, which outlives main's", v, exp, ok)
	}
	if _, _, ok := m.main.Peek("k"); ok {
		t.Fatal("after demote, main still holds k")
	}
	m.add(m.main, "k", []byte("main"), 0, 0, 0) // never expires
	m.demote("k", 150)
	if v, exp, _ := m.hot.Peek("k"); string(v) != "main" || exp != 0 {
		t.Fatalf("after demote, hot holds %q, %d; want main's", v, exp)
	}
}
