//go:build !js

package nethttp

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// The "loading" signal (102 Processing) from peers that abuse it: one that
// floods 102s and never answers, and one that says "loading" once and then
// hangs. Either way the caller gets the local load's answer, a present key
// its value and a missing key ErrNotFound, and never waits for the
// client's timeout (a 1 h timeout and a 1 min deadline here: a Get that
// waited for either would fail the test by its deadline error).
func TestPeerThatAbusesProcessing(t *testing.T) {
	noLeaks(t)
	for name, n := range map[string]int{"flood": 50, "once then hang": 1} {
		t.Run(name, func(t *testing.T) {
			p := startFakePeer(t, func(_ *http.Request, conn net.Conn) bool {
				_, _ = conn.Write([]byte(strings.Repeat("HTTP/1.1 102 Processing\r\n\r\n", n)))
				return false // then nothing: hang until the client closes
			})
			reg := cache.NewRegistry()
			quiet := slog.New(slog.DiscardHandler)
			pool, err := NewPool("", reg, &PoolOptions{Logger: quiet, Timeout: time.Hour}) // a client only: owns no key
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			mustSet(t, pool, p.addr)
			src := getter.Func(func(_ context.Context, key string) ([]byte, error) {
				if strings.HasPrefix(key, "missing") {
					return nil, getter.ErrNotFound
				}
				return []byte("local:" + key), nil
			})
			g, err := reg.NewGroup("scores", 1<<20, src, &cache.GroupOptions{Peers: pool, Logger: quiet,
				PeerPolicy: cache.PeerPolicy{HedgeMax: 50 * time.Millisecond, SlowAfter: 50 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			for i := range 3 {
				key := "k" + string(rune('0'+i))
				if v, err := g.Get(ctx, key); err != nil || v.String() != "local:"+key {
					t.Fatalf("Get(%s) = %q, %v; want the local load's value", key, v, err)
				}
				if _, err := g.Get(ctx, "missing"+key); !errors.Is(err, getter.ErrNotFound) {
					t.Fatalf("Get(missing%s) = %v; want ErrNotFound from the local load", key, err)
				}
			}
			testkit.WaitFor(t, "the fetches to end", func() bool { s := g.Stats(); return len(s.Peers) == 1 && s.Peers[0].InFlight == 0 })
		})
	}
}
