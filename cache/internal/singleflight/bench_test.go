package singleflight

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkDo measures the machinery of a load nobody joins: a fresh key
// each time and a fn that returns at once, on a worker. "background"
// callers cannot be cancelled (they only wait for the load); "cancellable"
// ones can (they wait for the load or their context).
func BenchmarkDo(b *testing.B) {
	fn := func(context.Context) (int, error) { return 1, nil }
	for _, bc := range []struct {
		name string
		ctx  func(*testing.B) context.Context
	}{
		{"background", func(*testing.B) context.Context { return context.Background() }},
		{"cancellable", func(b *testing.B) context.Context { return b.Context() }},
	} {
		b.Run(bc.name+"/serial", func(b *testing.B) {
			var g Group[int, struct{}]
			ctx := bc.ctx(b)
			keys := benchKeys(1 << 12)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := g.Do(ctx, keys[i&(len(keys)-1)], fn); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			var g Group[int, struct{}]
			ctx := bc.ctx(b)
			keys := benchKeys(1 << 12)
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1)) * 997
				for pb.Next() {
					if _, err := g.Do(ctx, keys[i&(len(keys)-1)], fn); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	return keys
}
