//go:build !js && !wasip1

package nethttp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"github.com/geecache/geecache/adapters/nethttp/internal/mux"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// Large values over the multiplexed carriage: each arrives in a buffer of
// its own, which becomes the value, so a 1 MiB value costs the client one
// allocation of its size; the checks (checksum, size limit, deadlines)
// still hold for every byte.

const bigLen = 1 << 20

// bigValue is the 1 MiB value of key.
func bigValue(key string) []byte {
	return bytes.Repeat([]byte(key+";"), bigLen/(len(key)+1)+1)[:bigLen]
}

// bigSource answers bigValue for a key that starts with "big", not found
// for one that starts with "missing", and "v:"+key for the others.
var bigSource = getter.Func(func(_ context.Context, key string) ([]byte, error) {
	switch {
	case strings.HasPrefix(key, "big"):
		return bigValue(key), nil
	case strings.HasPrefix(key, "missing"):
		return nil, getter.ErrNotFound
	}
	return []byte("v:" + key), nil
})

// TestMultiplexLargeValueOneAllocation: a 1 MiB value the owner holds
// comes over a multiplexed connection intact, at a cost (client and
// owner together, both in this process) of about one allocation of its
// size per Get. Before the body was read into the value's own buffer, the
// frame was read whole and the value copied out of it: 2 MiB a Get.
func TestMultiplexLargeValueOneAllocation(t *testing.T) {
	noLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := cache.NewRegistry()
	quiet := slog.New(slog.DiscardHandler)
	owner, err := NewPool("http://"+ln.Addr().String(), reg, &PoolOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.NewGroup("g", 64<<20, bigSource, &cache.GroupOptions{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	srv := NewServer("", owner, nil)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close(); <-done; _ = owner.Close() }()

	peer := muxPeer(t, ln.Addr().String())
	want := bigValue("big-1")
	if v, _, err := peerGet(t.Context(), peer, "g", "big-1"); err != nil || !bytes.Equal(v, want) {
		t.Fatalf("Get(big-1) = %d bytes, %v; want the owner's value", len(v), err)
	}
	const gets = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range gets {
		v, _, err := peerGet(t.Context(), peer, "g", "big-1")
		if err != nil || !bytes.Equal(v, want) {
			t.Fatalf("Get(big-1) = %d bytes, %v; want the owner's value", len(v), err)
		}
	}
	runtime.ReadMemStats(&after)
	perGet := float64(after.TotalAlloc-before.TotalAlloc) / gets
	t.Logf("%.0f KiB allocated per Get of a 1 MiB value", perGet/1024)
	if perGet > 1.25*bigLen {
		t.Errorf("%.2f MiB allocated per Get of a 1 MiB value; want about one copy (at most 1.25 MiB)", perGet/bigLen)
	}
	if _, _, err := peerGet(t.Context(), peer, "g", "missing-1"); !errors.Is(err, getter.ErrNotFound) {
		t.Fatalf("Get(missing-1) = %v; want not found", err)
	}
}

// TestMultiplexLargeValueFaults: a peer that sends a genuine 1 MiB answer
// with one byte changed, stops in the middle of its body, announces more
// than it sends, or less than the value, or a head longer than the frame:
// the caller gets an error (the group loads the key itself), or its
// context's end; never the value, never a wrong one, and a bounded cost.
func TestMultiplexLargeValueFaults(t *testing.T) {
	type want int
	const (
		integrity want = iota // the checksum fails
		deadline              // the caller's context ends first
		lost                  // the connection ends
	)
	faults := map[string]struct {
		send func(c net.Conn, f []byte, bodyAt int) // f: the genuine answer
		want want
	}{
		"one byte changed": {func(c net.Conn, f []byte, at int) {
			f[at+bigLen/2] ^= 1
			_, _ = c.Write(f)
		}, integrity},
		"stops mid-body": {func(c net.Conn, f []byte, at int) {
			_, _ = c.Write(f[:at+bigLen/4])
		}, deadline},
		"announces more": {func(c net.Conn, f []byte, _ int) {
			binary.BigEndian.PutUint32(f, binary.BigEndian.Uint32(f)+1000)
			_, _ = c.Write(f)
		}, deadline},
		"announces less": {func(c net.Conn, f []byte, _ int) {
			binary.BigEndian.PutUint32(f, binary.BigEndian.Uint32(f)-1000)
			_, _ = c.Write(f)
		}, integrity},
		"head longer than the frame": {func(c net.Conn, f []byte, _ int) {
			binary.BigEndian.PutUint32(f[mux.FrameHeader:], binary.BigEndian.Uint32(f)-3)
			_, _ = c.Write(f)
		}, lost},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			noLeaks(t)
			// A real node's answer to big-1, fetched before the Get is
			// measured, from another node: addr's first connection is the
			// fault's.
			_, _, other := startMuxServer(t, bigSource, 0)
			genuine := genuineAnswer(other, "big-1", 0)
			if len(genuine) < mux.FrameHeader+4+bigLen {
				t.Fatalf("the genuine answer: %d bytes", len(genuine))
			}
			addr := startGoAwayFault(t, bigSource, func(c net.Conn, id uint32, path string) {
				if strings.HasSuffix(path, "/big-1") {
					binary.BigEndian.PutUint32(genuine[5:], id)
					fault.send(c, genuine, mux.FrameHeader+4+int(binary.BigEndian.Uint32(genuine[mux.FrameHeader:])))
				}
			})
			peer := muxPeer(t, addr)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a Get held past it fails the test
			defer cancel()
			if fault.want == deadline {
				ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			v, _, err := peerGet(ctx, peer, "g", "big-1")
			runtime.ReadMemStats(&after)
			switch {
			case err == nil:
				t.Fatalf("Get(big-1) = %d bytes from a faulty peer (equal to the value: %v)", len(v), bytes.Equal(v, bigValue("big-1")))
			case fault.want == integrity && !errors.Is(err, cache.ErrIntegrity):
				t.Fatalf("Get(big-1): %v; want a failed integrity check", err)
			case fault.want == deadline && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("Get(big-1): %v; want the context's deadline", err)
			case fault.want == lost && !errors.Is(err, mux.ErrLost):
				t.Fatalf("Get(big-1): %v; want the connection lost", err)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 2*bigLen {
				t.Errorf("%d MiB allocated for one Get of a 1 MiB value", d>>20)
			}
		})
	}
}
