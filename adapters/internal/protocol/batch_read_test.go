package protocol

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// batchAnswer serves a BatchGet of n keys (the last one missing) and
// returns the client, the request and the answer.
func batchAnswer(t *testing.T, n int) (*Client, Request, Response, []string) {
	t.Helper()
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("g", 1<<20, getter.Func(func(_ context.Context, k string) ([]byte, error) {
		if k == "missing" {
			return nil, getter.ErrNotFound
		}
		return []byte(strings.Repeat(k, 8)), nil
	}), nil); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, n)
	for i := range keys[:n-1] {
		keys[i] = fmt.Sprintf("key-%04d", i)
	}
	keys[n-1] = "missing"
	c := newClient(t, nil)
	req := c.NewBatchRequest(t.Context(), "http://x", "g", BatchGet, keys, false)
	r := newServer(t, reg, nil).Serve(t.Context(), req)
	if r.Status != http.StatusOK {
		t.Fatalf("Serve = %d %q", r.Status, r.Body)
	}
	return c, req, r, keys
}

// A batch answer is read whole whether or not its size was announced, and
// one longer or shorter than announced is refused (ErrBadResponse).
func TestReadBatchResponseSize(t *testing.T) {
	c, req, r, keys := batchAnswer(t, 5)
	n := int64(len(r.Body))
	for _, tc := range []struct {
		name string
		size int64
		ok   bool
	}{
		{"announced", n, true},
		{"not announced", -1, true},
		{"longer than announced", n - 1, false},
		{"shorter than announced", n + 1, false},
		{"empty, announced as 0", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := c.ReadBatchResponse(t.Context(), req, r.Status, r.Header, tc.size, bytes.NewReader(r.Body), keys,
				func(i int, v []byte, _ time.Duration, err error) {
					got = append(got, fmt.Sprintf("%d=%s/%t", i, v, errors.Is(err, getter.ErrNotFound)))
				})
			if !tc.ok {
				if !errors.Is(err, ErrBadResponse) || got != nil {
					t.Fatalf("ReadBatchResponse = %v after %v; want ErrBadResponse and no entry", err, got)
				}
				return
			}
			if err != nil || len(got) != len(keys) || got[0] != "0="+strings.Repeat(keys[0], 8)+"/false" || got[4] != "4=/true" {
				t.Fatalf("ReadBatchResponse = %v, %v", got, err)
			}
		})
	}
}

// Reading a batch answer of announced size allocates its body once, and
// each value once (the cache keeps it): not a buffer grown over and over.
func TestReadBatchResponseAllocations(t *testing.T) {
	c, req, r, keys := batchAnswer(t, 200)
	rd := bytes.NewReader(r.Body)
	each := func(int, []byte, time.Duration, error) {}
	var err error
	allocs := testing.AllocsPerRun(20, func() {
		rd.Reset(r.Body)
		err = c.ReadBatchResponse(context.Background(), req, r.Status, r.Header, int64(len(r.Body)), rd, keys, each)
	})
	if err != nil {
		t.Fatal(err)
	}
	// 199 values, one "not found" error (two allocations), the body.
	if want := float64(len(keys) + 3); allocs > want {
		t.Fatalf("%v allocations for a %d-byte answer of %d keys; want at most %v", allocs, len(r.Body), len(keys), want)
	}
}

// A server answers a BatchGet of keys warm in its cache without an
// allocation per key: the keys are read out of the body as substrings of
// one string.
func TestServeBatchGetAllocations(t *testing.T) {
	reg := cache.NewRegistry()
	_, err := reg.NewGroup("g", 1<<20, getter.Func(func(_ context.Context, k string) ([]byte, error) {
		return []byte("v:" + k), nil
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%04d", i)
		if _, _, err := peerGet(t.Context(), reg, "g", keys[i]); err != nil {
			t.Fatal(err)
		}
	}
	s := newServer(t, reg, nil)
	req := newClient(t, nil).NewBatchRequest(t.Context(), "http://x", "g", BatchGet, keys, false)
	var r Response
	allocs := testing.AllocsPerRun(20, func() { r = s.Serve(context.Background(), req) })
	if r.Status != http.StatusOK {
		t.Fatalf("Serve = %d %q", r.Status, r.Body)
	}
	if perKey := allocs / float64(len(keys)); perKey > 0.5 {
		t.Fatalf("%v allocations for a batch of %d warm keys (%.2f per key); want at most 0.5 per key", allocs, len(keys), perKey)
	}
}

// onePeerKey says that one key is owned by peer, and the others here.
type onePeerKey struct {
	peer cache.Peer
	key  string
}

func (p onePeerKey) PickPeer(key string) (cache.Peer, bool) { return p.peer, key == p.key }

// A key that a BatchGet makes its server keep does not keep the request's
// body alive: the server copies it out of the body's string. A peer's
// batch loads the key "cold"; a memory-only one (a handoff's) finds it in
// main, owned by a peer now, and moves it to the hot cache under the
// request's key. The batch's other keys are long (a body of about 900
// KiB), and warm, so that only the short key is kept from the request.
func TestServeBatchGetKeepsNoBody(t *testing.T) {
	for _, memoryOnly := range []bool{false, true} {
		t.Run(fmt.Sprint("memory-only=", memoryOnly), func(t *testing.T) {
			reg := cache.NewRegistry()
			var o cache.GroupOptions
			if memoryOnly {
				o.Peers = onePeerKey{&recordingPeer{}, "cold"}
			}
			g, err := reg.NewGroup("g", 64<<20, getter.Func(func(_ context.Context, k string) ([]byte, error) {
				return []byte("v"), nil
			}), &o)
			if err != nil {
				t.Fatal(err)
			}
			keys := []string{"cold"}
			if memoryOnly {
				if _, _, err := peerGet(t.Context(), reg, "g", "cold"); err != nil { // in main: loaded as its owner
					t.Fatal(err)
				}
			}
			for i := range 15 {
				k := fmt.Sprintf("%02d", i) + strings.Repeat("x", 60<<10)
				if _, _, err := peerGet(t.Context(), reg, "g", k); err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k)
			}
			s := newServer(t, reg, nil)
			c := newClient(t, nil)
			heap := func() uint64 {
				var m runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			before := heap()
			func() {
				req := c.NewBatchRequest(t.Context(), "http://x", "g", BatchGet, keys, memoryOnly)
				if r := s.Serve(t.Context(), req); r.Status != http.StatusOK {
					t.Fatalf("Serve = %d %q", r.Status, r.Body)
				}
			}()
			kept := int64(heap()) - int64(before)
			st := g.Stats()
			if memoryOnly && st.Hot.Items != 1 {
				t.Fatalf("the hot cache holds %d entries; want cold, moved there by the memory-only batch", st.Hot.Items)
			}
			if !memoryOnly && st.Main.Items != 16 {
				t.Fatalf("main holds %d entries; want the 15 long keys and cold, loaded by the batch", st.Main.Items)
			}
			if kept > 300<<10 {
				t.Fatalf("the batch left %d bytes on the heap for one short key it kept; want under 300 KiB (its body is about 900 KiB)", kept)
			}
		})
	}
}
