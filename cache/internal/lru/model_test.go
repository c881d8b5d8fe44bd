package lru

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// A model is a plain map that a Cache under test must agree with.
type model struct {
	c *Cache
	m map[string]modelEntry
}

type modelEntry struct {
	value   []byte
	expires int64
}

func newModel(countOverhead bool) *model {
	return &model{c: New(countOverhead), m: map[string]modelEntry{}}
}

// step applies one operation, chosen by op, to the cache and the model
// and checks that they agree: same values and expiries, same byte and item
// counts, eviction only of entries that exist, and an expired entry (the
// one that expired first) evicted before any other. EvictExpired evicts
// exactly when an entry has expired.
func (m *model) step(t *testing.T, i int, op, key, arg byte) {
	t.Helper()
	k := fmt.Sprint(key % 32)
	switch op % 6 {
	case 0:
		v := make([]byte, int(arg)%7)
		exp := int64(arg%4) * 10 // 0 (never), 10, 20 or 30
		m.c.Add(k, v, exp)
		m.m[k] = modelEntry{v, exp}
	case 1, 2:
		get := m.c.Get
		if op%6 == 2 {
			get = m.c.Peek
			if arg%2 == 0 {
				m.c.Use(k) // a use, as an offer's, changes no value or count
			}
		}
		v, exp, ok := get(k)
		me, mok := m.m[k]
		if ok != mok || string(v) != string(me.value) || exp != me.expires {
			t.Fatalf("op %d: Get/Peek(%s) = %q, %d, %v; model %q, %d, %v", i, k, v, exp, ok, me.value, me.expires, mok)
		}
	case 3:
		_, present := m.m[k]
		if got := m.c.Remove(k); got != present {
			t.Fatalf("op %d: Remove(%s) = %v, want %v", i, k, got, present)
		}
		delete(m.m, k)
	case 4, 5:
		now := int64(arg%5) * 10 // 0 (expiry ignored) to 40
		first := int64(-1)       // the earliest expiry at or before now
		for _, e := range m.m {
			if now != 0 && e.expires != 0 && e.expires <= now && (first < 0 || e.expires < first) {
				first = e.expires
			}
		}
		name, evict, want := "EvictOne", m.c.EvictOne, len(m.m) > 0
		if op%6 == 5 {
			name, evict, want = "EvictExpired", m.c.EvictExpired, first >= 0
		}
		if got := evict(now); got != want {
			t.Fatalf("op %d: %s(%d) = %v with %d entries", i, name, now, got, len(m.m))
		}
		gone := m.forgetEvicted()
		if wantGone := map[bool]int{false: 0, true: 1}[want]; len(gone) != wantGone {
			t.Fatalf("op %d: %s removed %d entries", i, name, len(gone))
		}
		if first >= 0 && gone[0].expires != first {
			t.Fatalf("op %d: %s(%d) evicted an entry expiring at %d, not the first expired (%d)", i, name, now, gone[0].expires, first)
		}
	}
	m.check(t, i)
}

// forgetEvicted drops from the model, and returns, the entries that the
// cache no longer holds.
func (m *model) forgetEvicted() []modelEntry {
	var gone []modelEntry
	for k, e := range m.m {
		if _, _, ok := m.c.Peek(k); !ok {
			gone = append(gone, e)
			delete(m.m, k)
		}
	}
	return gone
}

// check fails unless the cache's byte and item counts are the model's,
// and Keys lists the model's keys in the order of referenceRanking.
func (m *model) check(t *testing.T, op int) {
	t.Helper()
	var bytes int64
	for k, e := range m.m {
		bytes += m.c.Charge(k, e.value)
		if m.c.overhead > 0 && m.c.Charge(k, e.value) != int64(len(k)+len(e.value))+EntryOverhead {
			t.Fatalf("op %d: Charge(%s) = %d, want key, value and EntryOverhead", op, k, m.c.Charge(k, e.value))
		}
	}
	if m.c.Bytes() != bytes || m.c.Len() != int64(len(m.m)) {
		t.Fatalf("op %d: Bytes = %d, Len = %d; model %d, %d", op, m.c.Bytes(), m.c.Len(), bytes, len(m.m))
	}
	got, want := m.c.Keys(64, nil), keysOf(referenceRanking(m.c))
	if len(got) != len(m.m) || !slices.Equal(got, want) {
		t.Fatalf("op %d: Keys = %q; want %q, the model's %d keys ranked", op, got, want, len(m.m))
	}
	p := &m.c.policy
	if p.window.n+p.main.n != len(m.m) || p.window.bytes+p.main.bytes != bytes {
		t.Fatalf("op %d: queues hold %d+%d entries, %d+%d bytes; model %d, %d",
			op, p.window.n, p.main.n, p.window.bytes, p.main.bytes, len(m.m), bytes)
	}
}

// TestAccountingMatchesModel runs random operations, with and without the
// per-entry overhead counted, and checks the cache against the model after
// each one.
func TestAccountingMatchesModel(t *testing.T) {
	for _, overhead := range []bool{false, true} {
		m := newModel(overhead)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range 20000 {
			m.step(t, i, byte(r.IntN(6)), byte(r.IntN(256)), byte(r.IntN(256)))
		}
	}
}

// FuzzCacheMatchesModel drives the cache with operations decoded from the
// input (the first byte chooses whether overhead is counted, then three
// bytes per operation) and checks it against the model after each one.
func FuzzCacheMatchesModel(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 2, 1, 1, 1, 3, 0, 2, 4, 1, 9})
	f.Add([]byte("add add get evict remove add evict evict get"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		m := newModel(ops[0]%2 == 1)
		for i := 1; i+2 < len(ops); i += 3 {
			m.step(t, i, ops[i], ops[i+1], ops[i+2])
		}
	})
}
