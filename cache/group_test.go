package cache_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// sizedGetter returns, for key "k<i>", a value of i%97 bytes, and counts calls.
type sizedGetter struct{ calls atomic.Int64 }

func (s *sizedGetter) Get(_ context.Context, key string) ([]byte, error) {
	s.calls.Add(1)
	var i int
	if _, err := fmt.Sscanf(key, "k%d", &i); err != nil {
		return nil, getter.ErrNotFound
	}
	return make([]byte, i%97), nil
}

func newGroup(t testing.TB, budget int64, g getter.Getter) *cache.Group {
	t.Helper()
	grp, err := cache.NewRegistry().NewGroup("g", budget, g, &cache.GroupOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return grp
}

func TestBudgetNeverExceeded(t *testing.T) {
	const budget = 4096
	grp := newGroup(t, budget, &sizedGetter{})
	var wg sync.WaitGroup
	var over atomic.Int64
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 3000 {
				if _, err := grp.Get(t.Context(), fmt.Sprintf("k%d", r.IntN(500))); err != nil {
					t.Error(err)
					return
				}
				s := grp.Stats()
				if s.Main.Bytes+s.Hot.Bytes > budget {
					over.Add(1)
				}
			}
		})
	}
	wg.Wait()
	s := grp.Stats()
	if over.Load() > 0 || s.Main.Bytes > budget || s.Main.Evictions == 0 {
		t.Fatalf("budget exceeded %d times; final stats %+v", over.Load(), s)
	}
}

func TestTooLargeValueServedNotKept(t *testing.T) {
	grp := newGroup(t, 10, getter.Map(map[string]string{"big": "0123456789abcdef"}))
	v, err := grp.Get(t.Context(), "big")
	if err != nil || v.String() != "0123456789abcdef" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	if s := grp.Stats(); s.Main.Items != 0 || s.Main.Bytes != 0 {
		t.Fatalf("a value over the budget was kept: %+v", s)
	}
}

func TestZeroBudgetKeepsNothing(t *testing.T) {
	var n atomic.Int32
	grp := newGroup(t, 0, getter.Func(func(context.Context, string) ([]byte, error) {
		n.Add(1)
		return nil, nil
	}))
	for range 2 {
		if _, err := grp.Get(t.Context(), ""); err != nil {
			t.Fatal(err)
		}
	}
	if s := grp.Stats(); n.Load() != 2 || s.Main.Items != 0 {
		t.Fatalf("Getter calls = %d, stats %+v; a zero budget must keep nothing", n.Load(), s)
	}
}

func TestGetterPanicIsErrorAndKeyNotStuck(t *testing.T) {
	var calls atomic.Int32
	grp := newGroup(t, 1<<10, getter.Func(func(context.Context, string) ([]byte, error) {
		if calls.Add(1) == 1 {
			panic("database exploded")
		}
		return []byte("ok"), nil
	}))
	if _, err := grp.Get(t.Context(), "k"); !errors.Is(err, cache.ErrGetterPanic) {
		t.Fatalf("err = %v, want ErrGetterPanic", err)
	}
	v, err := grp.Get(t.Context(), "k")
	if err != nil || v.String() != "ok" {
		t.Fatalf("after panic Get = %q, %v", v, err)
	}
}

func TestValuesAreImmutable(t *testing.T) {
	src := []byte("original")
	grp := newGroup(t, 1<<10, getter.Func(func(context.Context, string) ([]byte, error) { return src, nil }))
	v, _ := grp.Get(t.Context(), "k")
	copy(src, "XXXXXXXX") // the Getter reuses its buffer
	b := v.ByteSlice()
	b[0] = 'Y' // a caller scribbles on its copy
	again, _ := grp.Get(t.Context(), "k")
	if again.String() != "original" {
		t.Fatalf("cached value changed to %q", again.String())
	}
}

func TestNotFoundAndLoadErrors(t *testing.T) {
	down := errors.New("database down")
	grp := newGroup(t, 1<<10, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if key == "missing" {
			return nil, getter.ErrNotFound
		}
		return nil, down
	}))
	if _, err := grp.Get(t.Context(), "missing"); !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if _, err := grp.Get(t.Context(), "other"); !errors.Is(err, down) {
		t.Fatalf("err = %v, want the Getter's error", err)
	}
	if s := grp.Stats(); s.LoadErrors != 1 || s.LocalLoads != 2 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestEmptyKeyAndRemove(t *testing.T) {
	var n atomic.Int32
	grp := newGroup(t, 1<<10, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		n.Add(1)
		return []byte("v:" + key), nil
	}))
	for range 2 {
		if v, err := grp.Get(t.Context(), ""); err != nil || v.String() != "v:" {
			t.Fatalf("Get(\"\") = %q, %v", v, err)
		}
	}
	if err := grp.Remove(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	_, _ = grp.Get(t.Context(), "")
	if n.Load() != 2 {
		t.Fatalf("Getter calls = %d, want 2 (one before and one after Remove)", n.Load())
	}
}

func TestRegistry(t *testing.T) {
	r := cache.NewRegistry()
	src := getter.Map(nil)
	if _, err := r.NewGroup("a", 1, src, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.NewGroup("a", 1, src, nil); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("duplicate: err = %v", err)
	}
	if _, err := r.NewGroup("", 1, src, nil); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("empty name: err = %v", err)
	}
	if _, err := r.NewGroup("b", 1, nil, nil); !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("nil getter: err = %v", err)
	}
	if r.Lookup("a") == nil || r.Lookup("b") != nil {
		t.Fatal("Lookup disagrees with NewGroup")
	}
	// A second registry is a second node: same names, no conflict.
	if _, err := cache.NewRegistry().NewGroup("a", 1, src, nil); err != nil {
		t.Fatal(err)
	}
	if got := r.Names(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("Names = %v", got)
	}
}

func TestHitAllocatesNothing(t *testing.T) {
	grp := newGroup(t, 1<<10, getter.Map(map[string]string{"k": "v"}))
	ctx := t.Context()
	_, _ = grp.Get(ctx, "k")
	if n := testing.AllocsPerRun(100, func() { _, _ = grp.Get(ctx, "k") }); n != 0 {
		t.Fatalf("a hit allocates %v times", n)
	}
}
