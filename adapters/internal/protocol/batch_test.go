package protocol

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// SplitBatch keeps each run within MaxBatchKeys and MaxBatchBytes, covers
// every key once, in order, and gives a key over MaxBatchKey a run alone.
func TestSplitBatch(t *testing.T) {
	keys := make([]string, 0, 2600)
	for i := range 2500 {
		keys = append(keys, fmt.Sprint("k", i))
	}
	keys = append(keys, strings.Repeat("x", MaxBatchKey+1), "last")
	for range 40 {
		keys = append(keys, strings.Repeat("y", 60<<10)) // 40 × 60 KiB: over 1 MiB in all
	}
	next := 0
	SplitBatch(keys, func(lo, hi int) {
		if lo != next || hi <= lo {
			t.Fatalf("run [%d, %d) after %d", lo, hi, next)
		}
		next = hi
		if hi-lo > MaxBatchKeys {
			t.Fatalf("run [%d, %d) has %d keys", lo, hi, hi-lo)
		}
		if len(encodeKeys(keys[lo:hi])) > MaxBatchBytes {
			t.Fatalf("run [%d, %d) is %d bytes", lo, hi, len(encodeKeys(keys[lo:hi])))
		}
		for i := lo; i < hi; i++ {
			if TooLongForBatch(keys[i]) && hi-lo != 1 {
				t.Fatalf("a key over MaxBatchKey shares run [%d, %d)", lo, hi)
			}
		}
	})
	if next != len(keys) {
		t.Fatalf("runs end at %d of %d keys", next, len(keys))
	}
}

// A server refuses a batch that breaks the rules, and answers one that
// keeps them.
func TestServeBatchRefusals(t *testing.T) {
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("g", 1<<10, getter.Map(map[string]string{"a": "1"}), nil); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, reg, nil)
	c := newClient(t, nil)
	ctx := context.Background()
	tooMany := make([]string, MaxBatchKeys+1)
	tamper := c.NewBatchRequest(ctx, "http://x", "g", BatchGet, []string{"a"}, false)
	tamper.Body = encodeKeys([]string{"b"})
	noPeer := c.NewBatchRequest(ctx, "http://x", "g", BatchGet, []string{"a"}, false)
	noPeer.Header = noPeer.Header.Clone()
	noPeer.Header.Del(HeaderPeer)
	for _, tc := range []struct {
		name string
		req  Request
		code Code
	}{
		{"too many keys", c.NewBatchRequest(ctx, "http://x", "g", BatchGet, tooMany, false), CodeBadRequest},
		{"body changed", tamper, CodeBadRequest},
		{"no peer header", noPeer, CodeBadRequest},
		{"unknown group", c.NewBatchRequest(ctx, "http://x", "nope", BatchGet, []string{"a"}, false), CodeUnknownGroup},
		{"unsigned remove", c.NewBatchRequest(ctx, "http://x", "g", BatchRemove, []string{"a"}, false), CodeUnauthorized},
		{"unsigned purge", c.NewBatchRequest(ctx, "http://x", "g", BatchPurge, nil, false), CodeUnauthorized},
		{"unknown op", Request{Method: http.MethodPost, Path: Prefix + "g/!drop", Header: noPeer.Header}, CodeBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := s.Serve(ctx, tc.req); r.Code() != tc.code {
				t.Fatalf("Serve = %d %q %q; want %s", r.Status, r.Code(), r.Body, tc.code)
			}
		})
	}
	ok := c.NewBatchRequest(ctx, "http://x", "g", BatchGet, []string{"a", "zz"}, false)
	if r := s.Serve(ctx, ok); r.Status != http.StatusOK {
		t.Fatalf("a good batch: %d %q", r.Status, r.Body)
	}
}
