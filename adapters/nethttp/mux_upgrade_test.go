//go:build !js && !wasip1

package nethttp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// startUpgradeCutter starts a front on 127.0.0.1 for the real node at
// target: a connection whose first request asks for the multiplexed
// upgrade is closed without an answer (as a server that is shutting down
// closes a new connection), any other is relayed to target.
func startUpgradeCutter(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil || req.Header.Get("Upgrade") != "" {
					return // cut: no answer to the upgrade
				}
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				if err := req.Write(up); err != nil {
					return
				}
				go func() { _, _ = io.Copy(up, br); _ = up.Close() }()
				_, _ = io.Copy(c, up)
			})
		}
	})
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	return "http://" + ln.Addr().String()
}

// TestMultiplexUpgradeCutGoesOverHTTP1: a peer that closes the connection
// before it answers the upgrade took no request on it, so the request is
// sent over HTTP/1.1 and answered by the peer (a present key and a missing
// one), not failed into a local load with "upgrade: EOF"; the upgrade is
// tried again later. This happens when a server shuts down under traffic.
func TestMultiplexUpgradeCutGoesOverHTTP1(t *testing.T) {
	src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if strings.HasPrefix(key, "missing") {
			return nil, getter.ErrNotFound
		}
		return []byte("peer:" + key), nil
	})
	_, _, addr := startMuxServer(t, src, 0)
	front := startUpgradeCutter(t, addr)
	g := muxClientGroup(t, front, PoolOptions{}, cache.PeerPolicy{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for i, key := range []string{"a", "b", "c"} {
		v, err := g.Get(ctx, key)
		if err != nil || v.String() != "peer:"+key {
			t.Fatalf("Get %d (%s) = %q, %v; want the peer's value over HTTP/1.1", i, key, v.String(), err)
		}
		if _, err := g.Get(ctx, "missing-"+key); err == nil {
			t.Fatalf("Get(missing-%s) found a value", key)
		}
	}
	if st := g.Stats(); st.FallbackLoads != 0 || st.LocalLoads != 0 || st.PeerLoads != 6 {
		t.Errorf("stats: %d peer loads, %d fallback loads, %d local loads; want 6 (3 values, 3 not found), 0, 0", st.PeerLoads, st.FallbackLoads, st.LocalLoads)
	}
}
