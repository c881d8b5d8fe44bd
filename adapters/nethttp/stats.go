//go:build !js

package nethttp

import (
	"encoding/json"
	"net/http"

	"github.com/geecache/geecache/cache"
)

// StatsHandler returns an http.Handler that answers GET with 200 and the
// Stats of every group of reg as JSON ({"groups": {"name": {...}}}), so that
// it serves as a health check and a look at the node at once. It is not
// part of the peer protocol and nothing serves it by default: mount it
// where only operators reach it, such as a separate admin listener (see
// docs/operations.md, "Observability", for metrics through OpenTelemetry).
func StatsHandler(reg *cache.Registry) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		out := struct {
			Groups map[string]cache.Stats `json:"groups"`
		}{Groups: make(map[string]cache.Stats)}
		for _, name := range reg.Names() {
			if g := reg.Lookup(name); g != nil {
				out.Groups[name] = g.Stats()
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out) // the caller has gone; nothing to do
	})
}
