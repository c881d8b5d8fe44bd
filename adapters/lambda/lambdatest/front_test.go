//go:build !js

package lambdatest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// fakeRuntime serves fn as a runtime endpoint until the test ends.
func fakeRuntime(t *testing.T, fn func(ctx context.Context, payload []byte) ([]byte, error)) string {
	t.Helper()
	srv, ep := NewRuntime(fn)
	t.Cleanup(srv.Close)
	return ep
}

func newFront(t *testing.T, endpoints ...string) *httptest.Server {
	t.Helper()
	f, err := NewFront(endpoints, &FrontOptions{InvokeTimeout: 10 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(func() { srv.Close(); f.Close() })
	return srv
}

func httpGet(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header, body
}

func TestFrontEvent(t *testing.T) {
	var got events.LambdaFunctionURLRequest
	echo := func(_ context.Context, payload []byte) ([]byte, error) {
		if err := json.Unmarshal(payload, &got); err != nil {
			return nil, err
		}
		return json.Marshal(events.LambdaFunctionURLResponse{
			StatusCode: 201, Headers: map[string]string{"x-answer": "yes"},
			Body: base64.StdEncoding.EncodeToString([]byte{0, 255}), IsBase64Encoded: true,
			Cookies: []string{"a=1"},
		})
	}
	front := newFront(t, fakeRuntime(t, echo))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	binary := []byte{0, 1, 0xfe, 0xff}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, front.URL+"/p%2Fq/r?x=1&x=2", bytes.NewReader(binary))
	req.Header.Set("X-Geecache-Peer", "1")
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Cookie", "c=1; d=2")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 201 || res.Header.Get("X-Answer") != "yes" || !bytes.Equal(body, []byte{0, 255}) ||
		res.Header.Get("Set-Cookie") != "a=1" {
		t.Fatalf("response %d %v %q", res.StatusCode, res.Header, body)
	}
	if got.RawPath != "/p%2Fq/r" || got.RawQueryString != "x=1&x=2" || got.QueryStringParameters["x"] != "1,2" ||
		got.RequestContext.HTTP.Method != "PUT" || got.Headers["x-geecache-peer"] != "1" ||
		strings.Join(got.Cookies, ";") != "c=1;d=2" || got.Version != "2.0" {
		t.Fatalf("event %+v", got)
	}
	dec, err := base64.StdEncoding.DecodeString(got.Body)
	if !got.IsBase64Encoded || err != nil || !bytes.Equal(dec, binary) {
		t.Fatalf("binary body: base64=%v %q", got.IsBase64Encoded, got.Body)
	}

	// A JSON body travels as text.
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, front.URL+"/", strings.NewReader(`{"a":1}`))
	req.Header.Set("Content-Type", "application/json")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got.IsBase64Encoded || got.Body != `{"a":1}` {
		t.Fatalf("text body: base64=%v %q", got.IsBase64Encoded, got.Body)
	}
}

func TestFrontFunctionError(t *testing.T) {
	for name, fn := range map[string]func(context.Context, []byte) ([]byte, error){
		"function error": func(context.Context, []byte) ([]byte, error) { return nil, errors.New("boom") },
		"bad base64": func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"statusCode":200,"body":"!","isBase64Encoded":true}`), nil
		},
		"not JSON": func(context.Context, []byte) ([]byte, error) { return []byte(`{"statusCode":20`), nil },
	} {
		t.Run(name, func(t *testing.T) {
			front := newFront(t, fakeRuntime(t, fn))
			code, _, body := httpGet(t, front.URL+"/x")
			if code != http.StatusBadGateway {
				t.Fatalf("%d %q, want 502", code, body)
			}
		})
	}
}

// TestFrontOneInvokePerEndpoint checks that an endpoint never sees two
// invokes at once, and that a second endpoint does take a second request.
func TestFrontOneInvokePerEndpoint(t *testing.T) {
	for _, endpoints := range []int{1, 2} {
		var inFlight, maxInFlight atomic.Int64
		arrived := make(chan struct{}, 16)
		release := make(chan struct{})
		slow := func(ctx context.Context, _ []byte) ([]byte, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
			}
			arrived <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return []byte(`"ok"`), nil
		}
		var eps []string
		for range endpoints {
			eps = append(eps, fakeRuntime(t, slow))
		}
		front := newFront(t, eps...)

		const clients = 4
		var wg sync.WaitGroup
		codes := make(chan int, clients)
		for range clients {
			wg.Go(func() {
				code, _, _ := httpGet(t, front.URL+"/")
				codes <- code
			})
		}
		// Exactly `endpoints` invokes start before any is released.
		for range endpoints {
			select {
			case <-arrived:
			case <-time.After(10 * time.Second):
				t.Fatalf("%d endpoints: invokes did not start", endpoints)
			}
		}
		close(release)
		wg.Wait()
		close(codes)
		for c := range codes {
			if c != 200 {
				t.Fatalf("status %d", c)
			}
		}
		if m := maxInFlight.Load(); m != int64(endpoints) {
			t.Fatalf("%d endpoints: %d invokes in flight at most, want %d", endpoints, m, endpoints)
		}
	}
}

// A Front takes a runtime's base URL, as the emulator's address is
// given, and invokes the runtime's invoke endpoint under it; a full
// endpoint URL works too.
func TestFrontRuntimeBaseURL(t *testing.T) {
	paths := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		_, _ = w.Write([]byte(`{"statusCode":200,"body":"ok"}`))
	}))
	t.Cleanup(srv.Close)
	for _, ep := range []string{srv.URL, srv.URL + "/", srv.URL + "/2015-03-31/functions/function/invocations"} {
		front := newFront(t, ep)
		if code, _, body := httpGet(t, front.URL+"/x"); code != 200 || string(body) != "ok" {
			t.Errorf("endpoint %q: %d %q", ep, code, body)
		}
		if p := <-paths; p != "/2015-03-31/functions/function/invocations" {
			t.Errorf("endpoint %q: runtime saw %q, want the invoke path", ep, p)
		}
	}
}

func TestNewFrontErrors(t *testing.T) {
	if _, err := NewFront(nil, nil); err == nil {
		t.Error("no endpoints: no error")
	}
	for _, ep := range []string{"127.0.0.1:9001", "ftp://127.0.0.1:9001", "http://"} {
		if _, err := NewFront([]string{ep}, nil); err == nil {
			t.Errorf("endpoint %q: no error", ep)
		}
	}
}
