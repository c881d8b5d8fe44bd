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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// ownedBy is a PeerPicker that gives every key to one peer.
type ownedBy struct{ p cache.Peer }

func (o ownedBy) PickPeer(string) (cache.Peer, bool) { return o.p, true }

// batchKeysOf reads a batch request's keys, as the fake peers need them.
func batchKeysOf(t *testing.T, body []byte) []string {
	n, k := binary.Uvarint(body)
	body = body[k:]
	keys := make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(body)
		keys = append(keys, string(body[k:k+int(l)]))
		body = body[k+int(l):]
	}
	return keys
}

// entry encodes one entry of a batch answer as PROTOCOL.md says.
func entry(st byte, key string, payload []byte, sum uint64) []byte {
	b := []byte{st}
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, 0)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(b, payload...)
	return binary.BigEndian.AppendUint64(b, sum)
}

// answerBatch writes a 200 with body, and its right whole-body checksum.
func answerBatch(conn net.Conn, body []byte) {
	fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s: %s\r\nContent-Type: %s\r\n\r\n",
		len(body), protocol.HeaderChecksum, protocol.Checksum(body), protocol.BatchContentType)
	_, _ = conn.Write(body)
}

// A batch to a peer that hangs, answers part, answers garbage for one
// key, names the wrong key, or floods: the caller gets every key right
// (the owner's value, or its own load) or an error for it, never a wrong
// value; the missing key is "not found" either way.
func TestBatchFaultyPeer(t *testing.T) {
	keys := []string{"k0", "k1", "missing", "k3"}
	honest := func(k string) []byte {
		if k == "missing" {
			return entry(1, k, []byte("missing not exist"), xxhash.Sum64String("missing not exist"))
		}
		return entry(0, k, []byte("remote:"+k), xxhash.Sum64String("remote:"+k))
	}
	for _, tc := range []struct {
		name   string
		answer func(t *testing.T, keys []string, conn net.Conn, req *http.Request)
	}{
		{"hang", func(t *testing.T, keys []string, conn net.Conn, req *http.Request) {
			_, _ = io.Copy(io.Discard, conn) // until the client gives up
		}},
		{"part", func(t *testing.T, keys []string, conn net.Conn, req *http.Request) {
			b := binary.AppendUvarint(nil, 2)
			for _, k := range keys[:2] {
				b = append(b, honest(k)...)
			}
			answerBatch(conn, b)
		}},
		{"garbage for one key", func(t *testing.T, keys []string, conn net.Conn, req *http.Request) {
			b := binary.AppendUvarint(nil, uint64(len(keys)))
			for i, k := range keys {
				if i == 1 {
					b = append(b, entry(0, k, []byte("WRONG"), xxhash.Sum64String("remote:"+k))...)
					continue
				}
				b = append(b, honest(k)...)
			}
			answerBatch(conn, b)
		}},
		{"wrong key", func(t *testing.T, keys []string, conn net.Conn, req *http.Request) {
			b := binary.AppendUvarint(nil, uint64(len(keys)))
			for i, k := range keys {
				if i == 0 {
					b = append(b, honest("k3")...) // k3's value where k0's belongs
					continue
				}
				b = append(b, honest(k)...)
			}
			answerBatch(conn, b)
		}},
		{"more keys", func(t *testing.T, keys []string, conn net.Conn, req *http.Request) {
			b := binary.AppendUvarint(nil, uint64(len(keys)+1))
			for _, k := range keys {
				b = append(b, honest(k)...)
			}
			b = append(b, honest("extra")...)
			answerBatch(conn, b)
		}},
		{"flood", func(t *testing.T, keys []string, conn net.Conn, req *http.Request) {
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\n%s: 0000000000000000\r\n\r\n", protocol.HeaderChecksum)
			chunk := make([]byte, 64<<10)
			for range 1 << 12 { // 256 MiB at most; the client stops long before
				if _, err := conn.Write(chunk); err != nil {
					return
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp := startFakePeer(t, func(req *http.Request, conn net.Conn) bool {
				body, _ := io.ReadAll(req.Body)
				if req.Method != http.MethodPost {
					// A single Get, after the batch: answer it honestly.
					k := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
					v := "remote:" + k
					fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s: %s\r\n\r\n%s", len(v), protocol.HeaderChecksum, protocol.Checksum([]byte(v)), v)
					return true
				}
				tc.answer(t, batchKeysOf(t, body), conn, req)
				return false
			})
			c := mustClient(t, fp.addr, &ClientOptions{Timeout: time.Second, MaxValueBytes: 1 << 20})
			src := getter.Func(func(_ context.Context, k string) ([]byte, error) {
				if k == "missing" {
					return nil, fmt.Errorf("%s: %w", k, getter.ErrNotFound)
				}
				return []byte("local:" + k), nil
			})
			g, err := cache.NewRegistry().NewGroup("g", 1<<20, src, &cache.GroupOptions{Peers: ownedBy{c}, Logger: slog.New(slog.DiscardHandler),
				PeerPolicy: cache.PeerPolicy{HedgeMin: 50 * time.Millisecond, HedgeMax: 100 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			calls := 0
			g.GetMany(ctx, keys, func(i int, v cache.ByteView, err error) {
				calls++
				k := keys[i]
				switch {
				case k == "missing":
					if !errors.Is(err, getter.ErrNotFound) {
						t.Errorf("missing: %q, %v; want not found", v, err)
					}
				case err != nil:
					t.Logf("%s: an error, allowed: %v", k, err)
				case v.String() != "remote:"+k && v.String() != "local:"+k:
					t.Errorf("%s: the wrong value %q", k, v)
				}
			})
			if calls != len(keys) {
				t.Fatalf("each called %d times for %d keys", calls, len(keys))
			}
			c.CloseIdleConnections()
		})
	}
}

// A node of the previous protocol version answers a batch 405: the caller
// asks it key by key, once, and gets every value.
func TestBatchToOldNodeAsksKeyByKey(t *testing.T) {
	var posts, gets atomic.Int64
	fp := startFakePeer(t, func(req *http.Request, conn net.Conn) bool {
		_, _ = io.Copy(io.Discard, req.Body)
		if req.Method == http.MethodPost {
			posts.Add(1)
			msg := "method POST not allowed, use GET\n"
			fmt.Fprintf(conn, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: %d\r\n%s: %s\r\n%s: method_not_allowed\r\n\r\n%s",
				len(msg), protocol.HeaderChecksum, protocol.Checksum([]byte(msg)), protocol.HeaderError, msg)
			return true
		}
		gets.Add(1)
		k := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
		if k == "missing" {
			msg := "missing not exist\n"
			fmt.Fprintf(conn, "HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n%s: %s\r\n%s: not_found\r\n\r\n%s",
				len(msg), protocol.HeaderChecksum, protocol.Checksum([]byte(msg)), protocol.HeaderError, msg)
			return true
		}
		v := "remote:" + k
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s: %s\r\n\r\n%s", len(v), protocol.HeaderChecksum, protocol.Checksum([]byte(v)), v)
		return true
	})
	c := mustClient(t, fp.addr, nil)
	defer c.CloseIdleConnections()
	// No hedge: the local source has none of the keys, and the test
	// counts the requests.
	g, err := cache.NewRegistry().NewGroup("g", 1<<20, getter.Map(nil), &cache.GroupOptions{Peers: ownedBy{c}, Logger: slog.New(slog.DiscardHandler),
		PeerPolicy: cache.PeerPolicy{NoHedge: true}})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"k0", "missing", "k2"}
	g.GetMany(t.Context(), keys, func(i int, v cache.ByteView, err error) {
		switch k := keys[i]; {
		case k == "missing":
			if !errors.Is(err, getter.ErrNotFound) || !strings.Contains(err.Error(), "missing not exist") {
				t.Errorf("missing: %q, %v; want the owner's not found", v, err)
			}
		case err != nil || v.String() != "remote:"+k:
			t.Errorf("%s: %q, %v; want the owner's value", k, v, err)
		}
	})
	if posts.Load() != 1 || gets.Load() != 3 {
		t.Fatalf("%d batches and %d Gets; want 1 batch, then 3 Gets", posts.Load(), gets.Load())
	}
	// For a while it is asked key by key at once, without a batch first.
	g.GetMany(t.Context(), []string{"k4", "k5"}, func(i int, v cache.ByteView, err error) {
		if err != nil || v.String() != fmt.Sprint("remote:k", 4+i) {
			t.Errorf("k%d: %q, %v", 4+i, v, err)
		}
	})
	if posts.Load() != 1 || gets.Load() != 5 {
		t.Fatalf("then %d batches and %d Gets; want no new batch, 2 Gets", posts.Load(), gets.Load())
	}
	if s := g.Stats(); s.Peers[0].ConsecutiveFailures != 0 {
		t.Fatalf("the old node counts %d failures; a 405 to a batch is not one", s.Peers[0].ConsecutiveFailures)
	}
}
