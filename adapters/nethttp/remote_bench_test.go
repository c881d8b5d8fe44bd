//go:build !js

package nethttp

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// BenchmarkRemoteGet fetches a cached value from a Handler on loopback:
// the cost of a healthy remote fetch, both ends in one process.
func BenchmarkRemoteGet(b *testing.B) {
	for _, bc := range []struct {
		name string
		size int
	}{{"10B", 10}, {"64KiB", 64 << 10}, {"1MiB", 1 << 20}} {
		b.Run(bc.name, func(b *testing.B) {
			value := bytes.Repeat([]byte{'v'}, bc.size)
			reg := cache.NewRegistry()
			if _, err := reg.NewGroup("scores", 64<<20, getter.Func(func(context.Context, string) ([]byte, error) {
				return value, nil
			}), nil); err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(mustHandler(b, reg, &handlerOptions{Logger: slog.New(slog.DiscardHandler)}))
			defer srv.Close()
			c := mustClient(b, srv.URL, nil)
			defer c.CloseIdleConnections()
			b.SetBytes(int64(bc.size))
			b.ReportAllocs()
			for b.Loop() {
				if v, _, err := peerGet(b.Context(), c, "scores", "k"); err != nil || len(v) != bc.size {
					b.Fatalf("Get = %d bytes, %v", len(v), err)
				}
			}
		})
	}
}
