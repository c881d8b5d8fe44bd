//go:build !js

package nethttp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// A GetMany of more keys than one batch request holds is split into
// several requests. A peer that answers the first with one entry more
// than it was asked for, and the second with none, must not have that
// extra entry taken as the answer for the first key of the second
// request (whose name the client never checked against it): the key the
// peer left out is its failure, loaded locally, never the extra entry's
// value.
func TestBatchExtraEntryDoesNotAnswerTheNextRequestsKey(t *testing.T) {
	keys := make([]string, 1001) // 1,000 in the first request, 1 in the second
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	var posts atomic.Int64
	fp := startFakePeer(t, func(req *http.Request, conn net.Conn) bool {
		body, _ := io.ReadAll(req.Body)
		asked := batchKeysOf(t, body)
		if posts.Add(1) > 1 || len(asked) != 1000 {
			answerBatch(conn, binary.AppendUvarint(nil, 0)) // leaves the key out
			return true
		}
		b := binary.AppendUvarint(nil, uint64(len(asked)+1))
		for _, k := range asked {
			v := "remote:" + k
			b = append(b, entry(0, k, []byte(v), xxhash.Sum64String(v))...)
		}
		b = append(b, entry(0, "k1000", []byte("WRONG"), xxhash.Sum64String("WRONG"))...)
		answerBatch(conn, b)
		return true
	})
	c := mustClient(t, fp.addr, nil)
	defer c.CloseIdleConnections()
	src := getter.Func(func(_ context.Context, k string) ([]byte, error) { return []byte("local:" + k), nil })
	g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: ownedBy{c}, Logger: slog.New(slog.DiscardHandler),
		PeerPolicy: cache.PeerPolicy{NoHedge: true}})
	if err != nil {
		t.Fatal(err)
	}
	g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
		k := keys[i]
		if err == nil && v.String() != "remote:"+k && v.String() != "local:"+k {
			t.Errorf("%s: the wrong value %q", k, v)
		}
	})
	if posts.Load() != 2 {
		t.Fatalf("%d batch requests; want 2", posts.Load())
	}
}

// A peer that announces a 64 MiB answer to a batch and sends 1 byte costs
// the asking node what it sent plus a bounded chunk, as it does for a
// value (PROTOCOL.md, "Bounded reads"), not an allocation of the
// announced size.
func TestBatchHugeAnnouncedLength(t *testing.T) {
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s: %s\r\n\r\nx", 64<<20, protocol.HeaderChecksum, protocol.Checksum(nil))
	fp := startFakePeer(t, func(req *http.Request, conn net.Conn) bool {
		_, _ = io.Copy(io.Discard, req.Body)
		_, _ = conn.Write([]byte(head))
		_ = conn.(*net.TCPConn).CloseWrite()
		return false
	})
	c := mustClient(t, fp.addr, nil)
	defer c.CloseIdleConnections()
	batch := func() {
		err := peerBatch(t.Context(), c, "g", []string{"k0", "k1"}, false, func(int, []byte, time.Duration, error) {})
		if !errors.Is(err, protocol.ErrBadResponse) {
			t.Fatalf("Batch = %v; want ErrBadResponse", err)
		}
	}
	batch() // warm up
	const n = 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		batch()
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per batch", per)
	if per >= 4<<20 {
		t.Fatalf("%d bytes allocated per batch for a 1-byte answer announced as 64 MiB; want a bounded chunk", per)
	}
}
