//go:build !js

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// maxAPIKeys bounds the keys of one /api request.
const maxAPIKeys = 100

// serveMany answers GET /api?key=K1&key=K2…: one line per key, in the
// order asked, "K score" or "K not exist" (or "K error"), from one
// Group.GetMany: the keys each other node owns are asked from it in one
// request, and a missing key costs only its own line.
func serveMany(w http.ResponseWriter, r *http.Request, n *node, keys []string, log *slog.Logger) {
	if len(keys) > maxAPIKeys {
		http.Error(w, fmt.Sprintf("at most %d keys per request", maxAPIKeys), http.StatusBadRequest)
		return
	}
	for _, k := range keys {
		if k == "" {
			http.Error(w, "missing key parameter: use /api?key=NAME", http.StatusBadRequest)
			return
		}
	}
	log.Info("api request", "keys", logKeys(keys), "via", n.addr)
	var b strings.Builder
	n.group.GetMany(r.Context(), keys, func(i int, v cache.ByteView, err error) {
		switch {
		case errors.Is(err, getter.ErrNotFound):
			fmt.Fprintf(&b, "%s not exist\n", keys[i])
		case err != nil:
			log.Warn("api request failed", "key", logKey(keys[i]), "err", logErr(err, keys[i]))
			fmt.Fprintf(&b, "%s error\n", keys[i])
		default:
			fmt.Fprintf(&b, "%s %s\n", keys[i], v)
		}
	})
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}
