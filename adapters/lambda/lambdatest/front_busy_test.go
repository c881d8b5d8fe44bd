//go:build !js

package lambdatest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// roundTripFunc is an http.RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestFrontKeepsEndpointBusyAfterCallerLeaves: a caller that leaves during
// an invoke does not free its endpoint while the function still runs (as
// an emulator's does: a cancelled invoke request does not stop it); the
// next request waits for the function's end, so the endpoint never has two
// invokes at once, which crashes an emulator: an endpoint handed back to
// the Front as soon as the caller left would let the next request's invoke
// overlap the running one.
func TestFrontKeepsEndpointBusyAfterCallerLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var busy, overlaps, calls atomic.Int32
		ok := `{"statusCode":200,"headers":{"content-type":"text/plain"},"body":"ok"}`
		runtime := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			_, _ = io.Copy(io.Discard, r.Body)
			if busy.Add(1) > 1 {
				overlaps.Add(1)
			}
			first := calls.Add(1) == 1
			ended := make(chan struct{})
			go func() { // the function: it runs to its end whoever waits
				if first {
					<-release
				}
				busy.Add(-1)
				close(ended)
			}()
			select {
			case <-ended:
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(ok)), Request: r}, nil
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		})
		f, err := NewFront([]string{"http://127.0.0.1:9/"}, &FrontOptions{
			InvokeTimeout: time.Minute, Logger: slog.New(slog.DiscardHandler),
			Client: &http.Client{Transport: runtime},
		})
		if err != nil {
			t.Fatal(err)
		}
		serve := func(ctx context.Context) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			f.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/_geecache/scores/Tom", nil))
			return rec
		}

		ctx, leave := context.WithCancel(context.Background())
		first := make(chan struct{})
		go func() { serve(ctx); close(first) }()
		synctest.Wait() // the first invoke runs
		leave()
		<-first // its caller has its answer (none: it left)

		second := make(chan *httptest.ResponseRecorder)
		go func() { second <- serve(context.Background()) }()
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Errorf("the second request was invoked while the first function ran (%d invokes)", n)
		}
		close(release)
		rec := <-second
		if rec.Code != http.StatusOK || rec.Body.String() != "ok" {
			t.Errorf("second request: %d %q, want 200 ok", rec.Code, rec.Body)
		}
		if n := overlaps.Load(); n != 0 {
			t.Errorf("%d invokes overlapped a running one", n)
		}
		f.Close()
	})
}
