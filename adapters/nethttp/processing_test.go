//go:build !js

package nethttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/getter"
)

// statusRecorder records every status a handler writes, interim ones
// included (httptest.ResponseRecorder keeps only the final one).
type statusRecorder struct {
	*httptest.ResponseRecorder
	statuses []int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.statuses = append(r.statuses, code)
	if code >= 200 {
		r.ResponseRecorder.WriteHeader(code)
	}
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if len(r.statuses) == 0 || r.statuses[len(r.statuses)-1] < 200 {
		r.statuses = append(r.statuses, http.StatusOK)
	}
	return r.ResponseRecorder.Write(b)
}

// A node says it is loading (102 Processing) only when its load has not
// ended within processingAfter: a load from a source that answers at once
// costs no interim response, a slow one still gets exactly one before the
// answer. Present and missing keys alike. In a synctest bubble, so time is
// virtual: the fast source never lets the clock move.
func TestProcessingOnlyForSlowLoads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		want  []int
	}{
		{"fast/present", 0, []int{http.StatusOK}},
		{"fast/missing", 0, []int{http.StatusNotFound}},
		{"slow/present", 10 * processingAfter, []int{http.StatusProcessing, http.StatusOK}},
		{"slow/missing", 10 * processingAfter, []int{http.StatusProcessing, http.StatusNotFound}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				reg := newRegistry(t, getter.Func(func(ctx context.Context, key string) ([]byte, error) {
					if tc.delay > 0 {
						time.Sleep(tc.delay)
					}
					if key == "missing" {
						return nil, getter.ErrNotFound
					}
					return []byte("v:" + key), nil
				}))
				h := mustHandler(t, reg, nil)
				key := "present"
				if tc.want[len(tc.want)-1] == http.StatusNotFound {
					key = "missing"
				}
				req := httptest.NewRequest(http.MethodGet, "/_geecache/scores/"+key, nil)
				req.Header.Set(protocol.HeaderPeer, "1")
				w := &statusRecorder{ResponseRecorder: httptest.NewRecorder()}
				h.ServeHTTP(w, req)
				if !slices.Equal(w.statuses, tc.want) {
					t.Errorf("statuses written: %v; want %v", w.statuses, tc.want)
				}
				// A timer left armed would write after the answer; the
				// load's worker ends meanwhile, as the bubble requires.
				time.Sleep(time.Second)
				if !slices.Equal(w.statuses, tc.want) {
					t.Errorf("after the answer, statuses written: %v; want %v", w.statuses, tc.want)
				}
			})
		})
	}
}
