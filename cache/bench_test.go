package cache_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/geecache/geecache/getter"
)

// BenchmarkGetHit measures a hit on a warm group under zipf-distributed
// keys. The side-by-side comparison with other caches is in bench/.
func BenchmarkGetHit(b *testing.B) {
	const n = 100_000
	keys := make([]string, n)
	data := make(map[string]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d", i)
		data[keys[i]] = string(make([]byte, 64))
	}
	grp := newGroup(b, 64<<20, getter.Map(data))
	for _, k := range keys {
		if _, err := grp.Get(b.Context(), k); err != nil {
			b.Fatal(err)
		}
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 1)), 1.01, 1, n-1)
	seq := make([]string, 1<<16)
	for i := range seq {
		seq[i] = keys[z.Uint64()]
	}
	ctx := b.Context()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_, _ = grp.Get(ctx, seq[i&(len(seq)-1)])
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(len(seq))
			for pb.Next() {
				_, _ = grp.Get(ctx, seq[i&(len(seq)-1)])
				i++
			}
		})
	})
}
