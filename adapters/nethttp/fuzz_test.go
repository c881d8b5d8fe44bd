//go:build !js

package nethttp

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// FuzzHandler sends arbitrary request targets, parsed by net/http as a
// server would, to a Handler: no panic, only protocol statuses, and a 200
// carries exactly the value of the key the path names.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{"/_geecache/scores/Tom", "/_geecache/scores/a%2Fb", "/_geecache/scores/",
		"/_geecache/scores/%", "/_geecache//x", "/x/_geecache/scores/k?q=1#f", "*", "http://h/_geecache/scores/%E6%97%A5"} {
		f.Add(s)
	}
	reg := cache.NewRegistry()
	if _, err := reg.NewGroup("scores", 1<<16, getter.Func(func(_ context.Context, key string) ([]byte, error) {
		if strings.HasPrefix(key, "missing") {
			return nil, getter.ErrNotFound
		}
		return []byte("v:" + key), nil
	}), nil); err != nil {
		f.Fatal(err)
	}
	h := mustHandler(f, reg, &handlerOptions{BasePath: "/x"})
	f.Fuzz(func(t *testing.T, target string) {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: h\r\n\r\n")))
		if err != nil {
			return
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case 200:
			path, _ := strings.CutPrefix(req.URL.EscapedPath(), "/x")
			_, key, err := protocol.ParsePath(path)
			if err != nil || w.Body.String() != "v:"+key {
				t.Fatalf("%q: 200 %q, but the path names key %q (%v)", target, w.Body.String(), key, err)
			}
		case 400, 404:
		default:
			t.Fatalf("%q: status %d", target, w.Code)
		}
	})
}
