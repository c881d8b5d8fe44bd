package cache_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// concurrencyGetter is a source whose every load takes 10 ms (of bubble
// time) and that records the most loads it ever ran at once. A key that
// starts with "missing" does not exist.
type concurrencyGetter struct {
	now, max, calls atomic.Int64
	goroutines      atomic.Int64  // the most goroutines of the process alive during a load
	gate            chan struct{} // if not nil, keys starting with "gated" wait for it to close
}

func (c *concurrencyGetter) Get(ctx context.Context, key string) ([]byte, error) {
	c.calls.Add(1)
	n := c.now.Add(1)
	defer c.now.Add(-1)
	storeMax(&c.max, n)
	storeMax(&c.goroutines, int64(runtime.NumGoroutine()))
	if c.gate != nil && strings.HasPrefix(key, "gated") {
		<-c.gate
	}
	time.Sleep(10 * time.Millisecond)
	if strings.HasPrefix(key, "missing") {
		return nil, getter.ErrNotFound
	}
	return []byte("v:" + key), nil
}

// storeMax raises m to n if n is larger.
func storeMax(m *atomic.Int64, n int64) {
	for o := m.Load(); n > o && !m.CompareAndSwap(o, n); o = m.Load() {
	}
}

// boundKeys are n keys, every tenth of them missing.
func boundKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
		if i%10 == 0 {
			keys[i] = fmt.Sprint("missing", i)
		}
	}
	return keys
}

// checkBound runs getMany (a GetMany, or a peer's request of many keys)
// of keys and checks every result, and that src never ran more than
// MaxManyLoads loads at once but did run that many (the loads are bounded,
// not made one at a time).
func checkBound(t *testing.T, getMany func(keys []string, each func(int, cache.ByteView, error)), src *concurrencyGetter, keys []string) {
	t.Helper()
	got := 0
	getMany(keys, func(i int, v cache.ByteView, err error) {
		got++
		if strings.HasPrefix(keys[i], "missing") {
			if !errors.Is(err, getter.ErrNotFound) {
				t.Errorf("%s: %q, %v; want getter.ErrNotFound", keys[i], v, err)
			}
			return
		}
		if err != nil || v.String() != "v:"+keys[i] {
			t.Errorf("%s: %q, %v; want %q", keys[i], v, err, "v:"+keys[i])
		}
	})
	if got != len(keys) {
		t.Fatalf("each called %d times for %d keys", got, len(keys))
	}
	if n := src.calls.Load(); n != int64(len(keys)) {
		t.Fatalf("the source was called %d times for %d keys", n, len(keys))
	}
	if m := src.max.Load(); m > cache.MaxManyLoads || m < cache.MaxManyLoads {
		t.Fatalf("GetMany of %d keys this node owns ran %d loads at once; want %d (MaxManyLoads)", len(keys), m, cache.MaxManyLoads)
	}
}

// A GetMany of 1,000 keys this node loads runs at most MaxManyLoads
// Getter calls at once, not one per key, and answers every key, the
// missing ones with getter.ErrNotFound.
func TestGetManyBoundsItsLoads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		defer settleBubble() // the flights' idle workers end
		src := &concurrencyGetter{}
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkBound(t, func(keys []string, each func(int, cache.ByteView, error)) { g.GetMany(t.Context(), keys, each) }, src, boundKeys(1000))
	})
}

// A peer's request of many keys (ServePeer's OpGet) is bounded the same
// way on the owner.
func TestGetManyOfAPeerBoundsItsLoads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		defer settleBubble() // the flights' idle workers end
		src := &concurrencyGetter{}
		reg := cache.NewRegistry()
		if _, err := reg.NewGroup("g", 1<<20, src, &cache.GroupOptions{Logger: quiet}); err != nil {
			t.Fatal(err)
		}
		checkBound(t, func(keys []string, each func(int, cache.ByteView, error)) {
			a := newAnswers(len(keys))
			if err := reg.ServePeer(t.Context(), cache.PeerRequest{Op: cache.OpGet, Group: "g", Keys: keys}, a); err != nil {
				t.Fatal(err)
			}
			for i := range keys {
				if a.got[i] {
					each(i, a.vals[i], a.errs[i])
				}
			}
		}, src, boundKeys(1000))
	})
}

// Keys whose load is in flight already (here MaxManyLoads Gets, held in
// the source) take no load slot of a GetMany: its other keys load, and
// its hits are answered, while those loads are still held.
func TestGetManyJoinedLoadsTakeNoSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		defer settleBubble() // the flights' idle workers end
		src := &concurrencyGetter{gate: make(chan struct{})}
		g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Get(t.Context(), "hit"); err != nil {
			t.Fatal(err)
		}
		var keys []string
		done := make(chan struct{})
		for i := range cache.MaxManyLoads {
			k := fmt.Sprint("gated", i)
			keys = append(keys, k)
			go func() {
				defer func() { done <- struct{}{} }()
				if v, err := g.Get(context.Background(), k); err != nil || v.String() != "v:"+k {
					t.Errorf("Get(%s) = %q, %v", k, v, err)
				}
			}()
		}
		synctest.Wait() // every gated load is in flight, held
		keys = append(keys, "hit")
		keys = append(keys, boundKeys(200)...)
		answered := make(chan struct{})
		go func() {
			defer close(answered)
			g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
				if strings.HasPrefix(keys[i], "missing") {
					if !errors.Is(err, getter.ErrNotFound) {
						t.Errorf("%s: %q, %v; want getter.ErrNotFound", keys[i], v, err)
					}
				} else if err != nil || v.String() != "v:"+keys[i] {
					t.Errorf("%s: %q, %v", keys[i], v, err)
				}
			})
		}()
		time.Sleep(time.Second) // far more than 200 keys take at MaxManyLoads at once
		synctest.Wait()
		if n := src.calls.Load(); n != int64(1+cache.MaxManyLoads+200) {
			t.Fatalf("with the gated loads held, the source was called %d times; want %d (the GetMany's other keys all loaded)", n, 1+cache.MaxManyLoads+200)
		}
		close(src.gate)
		<-answered
		for range cache.MaxManyLoads {
			<-done
		}
	})
}

// boundOwnerKeys are n keys that node1 of a memPicker cluster owns.
func boundOwnerKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint("b", i)
	}
	return keys
}

// The keys of a GetMany that this node loads because their owner failed
// (fallback), hangs (hedge) or is busy (copies) share the bound of its own
// keys' loads: at most MaxManyLoads Getter calls at once, not one per key,
// on a bounded number of goroutines, not one per key waiting for its turn.
func TestGetManyFallbackAndHedgeLoadsShareTheBound(t *testing.T) {
	for _, fault := range []string{"down", "hung"} {
		t.Run(fault, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				defer settleBubble()
				nodes := []*memNode{{name: "node0"}, {name: "node1"}}
				src := &concurrencyGetter{}
				nodes[0].reg, nodes[1].reg = cache.NewRegistry(), cache.NewRegistry()
				g, err := nodes[0].reg.NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: memPicker{0, nodes}, Logger: quiet,
					PeerPolicy: cache.PeerPolicy{HedgeMin: 10 * time.Millisecond, HedgeMax: 10 * time.Millisecond}})
				if err != nil {
					t.Fatal(err)
				}
				nodes[0].group = g
				owner, err := nodes[1].reg.NewGroup("g", 1<<20, &concurrencyGetter{}, &cache.GroupOptions{Peers: memPicker{1, nodes}, Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				nodes[1].group = owner
				switch fault {
				case "down":
					nodes[1].down.Store(true)
				case "hung":
					nodes[1].stop()
					defer nodes[1].resume()
				}
				keys := boundOwnerKeys(1000)
				before := runtime.NumGoroutine()
				g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
					if err != nil || v.String() != "v:"+keys[i] {
						t.Errorf("%s: %q, %v", keys[i], v, err)
					}
				})
				if m := src.max.Load(); m > cache.MaxManyLoads {
					t.Fatalf("a GetMany of 1,000 keys of an owner that is %s ran %d loads at once here; want at most %d", fault, m, cache.MaxManyLoads)
				}
				// The loads' workers, the batch's request and the node's
				// own: a few times MaxManyLoads, far fewer than the keys.
				if n := src.goroutines.Load() - int64(before); n > 4*cache.MaxManyLoads {
					t.Errorf("a GetMany of 1,000 keys of an owner that is %s ran with %d more goroutines; want at most %d", fault, n, 4*cache.MaxManyLoads)
				}
			})
		})
	}
}

// The stale keys of a GetMany are refreshed at most MaxManyLoads at once,
// not all at once; each is served stale meanwhile.
func TestGetManyStaleKeysRefreshBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		defer settleBubble()
		src := &concurrencyGetter{}
		g, err := cache.NewRegistry().NewGroup("g", 1<<22, src, &cache.GroupOptions{Logger: quiet,
			TTL: time.Second, StaleWhileRevalidate: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		keys := boundOwnerKeys(1000)
		g.GetMany(t.Context(), keys, func(int, cache.ByteView, error) {})
		time.Sleep(2 * time.Second) // every key stale
		src.max.Store(0)
		g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
			if err != nil || v.String() != "v:"+keys[i] {
				t.Errorf("%s: %q, %v; want the stale value", keys[i], v, err)
			}
		})
		synctest.Wait()
		time.Sleep(time.Second)
		if m := src.max.Load(); m == 0 || m > cache.MaxManyLoads {
			t.Fatalf("the stale keys of one GetMany ran %d refreshes at once; want between 1 and %d", m, cache.MaxManyLoads)
		}
	})
}
