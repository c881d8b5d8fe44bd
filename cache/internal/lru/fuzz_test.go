package lru

import (
	"fmt"
	"testing"
)

// FuzzCacheMatchesModel drives the cache with operations decoded from the
// input and checks it against a plain map after each one: same values,
// same byte and item counts, and eviction only of entries that exist.
func FuzzCacheMatchesModel(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 1, 3, 0, 2, 1})
	f.Add([]byte("add add get evict remove add evict evict get"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		c := New()
		model := map[string][]byte{}
		for i := 0; i+1 < len(ops); i += 2 {
			key := fmt.Sprint(ops[i+1] % 32)
			switch ops[i] % 4 {
			case 0:
				v := make([]byte, int(ops[i+1])%7)
				c.Add(key, v)
				model[key] = v
			case 1:
				v, ok := c.Get(key)
				mv, mok := model[key]
				if ok != mok || string(v) != string(mv) {
					t.Fatalf("op %d: Get(%s) = %q, %v; model %q, %v", i, key, v, ok, mv, mok)
				}
			case 2:
				if got, want := c.Remove(key), model[key] != nil; got != want {
					t.Fatalf("op %d: Remove(%s) = %v, want %v", i, key, got, want)
				}
				delete(model, key)
			case 3:
				if got, want := c.EvictOne(), len(model) > 0; got != want {
					t.Fatalf("op %d: EvictOne = %v with %d entries", i, got, len(model))
				}
				forgetEvicted(c, model)
			}
			checkModel(t, i, c, model)
		}
	})
}
