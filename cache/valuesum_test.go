package cache_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/valuesum"
)

// sink is a valuesum.Sink that records what it was given.
type sink struct {
	written bytes.Buffer
	known   []uint64
}

func (s *sink) Write(p []byte) (int, error) { return s.written.Write(p) }
func (s *sink) Known(sum uint64)            { s.known = append(s.known, sum) }

// TestServePeerKeepsChecksum checks that a value of valuesum.Min bytes or
// more that a group loaded is handed to a protocol server's hasher (a
// valuesum.Sink) with its xxhash64, computed when it entered the cache,
// instead of its bytes, on every serve; that a smaller value, a slice of a
// kept one, and a Get's view (not a peer's request) are written as to any
// writer; and that every other writer gets the bytes.
func TestServePeerKeepsChecksum(t *testing.T) {
	large := strings.Repeat("x", valuesum.Min)
	small := strings.Repeat("y", valuesum.Min-1)
	var r cache.Registry
	g, err := r.NewGroup("blobs", 1<<20, getter.Map(map[string]string{"large": large, "small": small}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the load, then a hit
		v, _, err := serveKey(t.Context(), &r, g, cache.OpGet, "large")
		if err != nil {
			t.Fatal(err)
		}
		var s sink
		if n, err := v.WriteTo(&s); err != nil || n != int64(len(large)) {
			t.Fatalf("WriteTo = %d, %v", n, err)
		}
		if len(s.known) != 1 || s.known[0] != xxhash.Sum64String(large) || s.written.Len() != 0 {
			t.Fatalf("a kept value gave the sink sums %x and %d bytes, want only the sum %x", s.known, s.written.Len(), xxhash.Sum64String(large))
		}
		var b bytes.Buffer
		if _, err := v.WriteTo(&b); err != nil || b.String() != large {
			t.Fatalf("WriteTo a plain writer wrote %d bytes, %v", b.Len(), err)
		}
		var sl sink
		if _, err := v.Slice(1, v.Len()).WriteTo(&sl); err != nil || len(sl.known) != 0 || sl.written.String() != large[1:] {
			t.Fatalf("a slice gave sums %x and %d bytes, want its bytes", sl.known, sl.written.Len())
		}
	}
	for _, c := range []struct {
		key, want string
		local     bool
	}{{"small", small, true}, {"large", large, false}} {
		var v cache.ByteView
		if c.local {
			v, _, err = serveKey(t.Context(), &r, g, cache.OpGet, c.key)
		} else {
			v, err = g.Get(t.Context(), c.key)
		}
		if err != nil {
			t.Fatal(err)
		}
		var s sink
		if _, err := v.WriteTo(&s); err != nil || len(s.known) != 0 || s.written.String() != c.want {
			t.Fatalf("%s (OpGet %v): the sink got sums %x and %d bytes, want the bytes", c.key, c.local, s.known, s.written.Len())
		}
	}
	if _, _, err := serveKey(t.Context(), &r, g, cache.OpGet, "missing"); err == nil {
		t.Fatal("OpGet of a missing key did not fail")
	}
}
