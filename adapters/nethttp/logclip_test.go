//go:build !js

package nethttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/adapters/nethttp/nethttptest"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// syncBuffer is a bytes.Buffer for a logger written from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// docs/operations.md, "Hardened servers": strings that callers send are cut to
// 128 bytes and quoted in logs, so that a request with a huge path cannot
// make a huge log line. Here the caller's key (10 KB) reaches a source that
// fails, which the node logs.
func TestCallerStringsAreCutInLogs(t *testing.T) {
	var logs syncBuffer
	src := func(int) getter.Getter {
		return getter.Func(func(context.Context, string) ([]byte, error) { return nil, errors.New("db down") })
	}
	nodes := nethttptest.Start(t, 1, &nethttptest.Options{Getter: src,
		PoolOptions: nethttp.PoolOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	key := strings.Repeat("k", 10_000)
	for _, peer := range []string{"", "1"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, nodes[0].Addr+"/_geecache/scores/"+key, nil)
		if err != nil {
			t.Fatal(err)
		}
		if peer != "" {
			req.Header.Set("X-Geecache-Peer", peer)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusInternalServerError {
			t.Fatalf("a failing load answered %d; want 500", res.StatusCode)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	out := logs.String()
	if !strings.Contains(out, "db down") {
		t.Fatalf("the load failure was not logged: %q", out)
	}
	if strings.Contains(out, strings.Repeat("k", 129)) {
		t.Fatalf("a log line repeats more than 128 bytes of the caller's key (%d bytes of log): %.600s", len(out), out)
	}
}

// The same for the node that asks: a caller's long key whose owner is down
// (a transport error names the URL, key and all) or lies.
func TestCallerStringsAreCutInAskersLogs(t *testing.T) {
	for _, fault := range []nethttptest.Fault{{Down: true}} {
		var logs syncBuffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		src := func(int) getter.Getter {
			return getter.Func(func(context.Context, string) ([]byte, error) { return nil, errors.New("db down") })
		}
		nodes := nethttptest.Start(t, 2, &nethttptest.Options{Getter: src,
			GroupOptions: cache.GroupOptions{Logger: log},
			PoolOptions:  nethttp.PoolOptions{Logger: log}})
		var key string
		for i := 0; key == ""; i++ {
			if k := fmt.Sprint(i, strings.Repeat("k", 10_000)); nodes[0].Owner(k) == nodes[1] {
				key = k
			}
		}
		nodes[1].SetFault(fault)
		if _, err := nodes[0].Group.Get(t.Context(), key); err == nil {
			t.Fatal("Get of a key whose source fails: no error")
		}
		out := logs.String()
		if !strings.Contains(out, "geecache: peer failed") {
			t.Errorf("fault %+v: the failed fetch was not logged: %.1000s", fault, out)
		}
		if strings.Contains(out, strings.Repeat("k", 129)) {
			t.Errorf("fault %+v: a log line repeats more than 128 bytes of the caller's key: %.1000s", fault,
				regexp.MustCompile(`k{129,}`).ReplaceAllString(out, "K..."))
		}
	}
}
