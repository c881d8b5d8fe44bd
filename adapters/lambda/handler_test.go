//go:build !js

package lambda

import (
	"math/rand/v2"

	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/geecache/geecache/internal/keytest"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	awslambda "github.com/aws/aws-lambda-go/lambda"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// testNode is a registry with the groups the tests need, and counters of
// its Getters' calls.
type testNode struct {
	reg   *cache.Registry
	loads atomic.Int64
	big   int // size of the values of group "big"
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func newTestNode(t *testing.T, big int) *testNode {
	t.Helper()
	n := &testNode{reg: cache.NewRegistry(), big: big}
	scores := getter.Map(map[string]string{"Tom": "630", "Jack": "589", "Sam": "567"})
	groups := map[string]getter.Getter{
		"scores": getter.Func(func(ctx context.Context, key string) ([]byte, error) {
			n.loads.Add(1)
			return scores.Get(ctx, key)
		}),
		"binary": getter.Func(func(ctx context.Context, key string) ([]byte, error) {
			n.loads.Add(1)
			return allBytes(), nil
		}),
		"big": getter.Func(func(ctx context.Context, key string) ([]byte, error) {
			n.loads.Add(1)
			return bytes.Repeat([]byte{0xff}, n.big), nil
		}),
	}
	for name, g := range groups {
		if _, err := n.reg.NewGroup(name, 64<<20, g, nil); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// urlEvent returns the JSON of a Function URL request event.
func urlEvent(t *testing.T, method, rawPath string, hdr http.Header, body string, b64 bool) []byte {
	t.Helper()
	ev := events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: rawPath, Headers: map[string]string{},
		Body: body, IsBase64Encoded: b64,
	}
	ev.RequestContext.HTTP.Method = method
	ev.RequestContext.HTTP.Path = rawPath
	for k, vs := range hdr {
		ev.Headers[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// invoke runs the event through the same JSON path as lambda.Start and
// returns the decoded response, its body decoded, and the raw JSON size.
func invoke(t *testing.T, h *handler, event []byte) (events.LambdaFunctionURLResponse, []byte, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := awslambda.NewHandler(h.ServeURL).Invoke(ctx, event)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	var res events.LambdaFunctionURLResponse
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("response JSON: %v", err)
	}
	if !res.IsBase64Encoded {
		t.Fatalf("response not base64-flagged: %.200s", raw)
	}
	body, err := base64.StdEncoding.DecodeString(res.Body)
	if err != nil {
		t.Fatalf("response body: %v", err)
	}
	return res, body, len(raw)
}

func get(t *testing.T, h *handler, group, key string) (events.LambdaFunctionURLResponse, []byte) {
	t.Helper()
	res, body, _ := invoke(t, h, urlEvent(t, http.MethodGet, protocol.Path(group, key), nil, "", false))
	return res, body
}

func TestHandlerMissThenHit(t *testing.T) {
	n := newTestNode(t, 0)
	h := newTestHandler(t, n.reg, nil)
	for i, want := range []int64{1, 1} { // a miss loads, the hit does not
		res, body := get(t, h, "scores", "Tom")
		if res.StatusCode != http.StatusOK || string(body) != "630" {
			t.Fatalf("get %d: %d %q, want 200 630", i, res.StatusCode, body)
		}
		if got := n.loads.Load(); got != want {
			t.Fatalf("get %d: %d loads, want %d", i, got, want)
		}
	}
	if s := n.reg.Lookup("scores").Stats(); s.Hits != 1 {
		t.Fatalf("hits = %d, want 1", s.Hits)
	}
}

func TestHandlerErrors(t *testing.T) {
	n := newTestNode(t, 0)
	h := newTestHandler(t, n.reg, nil)
	for _, tc := range []struct {
		name, method, path string
		status             int
		code               protocol.Code
		msg                string
	}{
		{"not found", "GET", protocol.Path("scores", "kkk"), 404, protocol.CodeNotFound, "key not found"},
		{"unknown group", "GET", protocol.Path("nope", "Tom"), 404, protocol.CodeUnknownGroup, "nope"},
		{"bad path", "GET", "/elsewhere/scores/Tom", 400, protocol.CodeBadRequest, "malformed"},
		{"no key segment", "GET", "/_geecache/scores", 400, protocol.CodeBadRequest, "malformed"},
		{"method", "PATCH", protocol.Path("scores", "Tom"), 405, protocol.CodeMethodNotAllowed, "PATCH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body, _ := invoke(t, h, urlEvent(t, tc.method, tc.path, nil, "", false))
			if res.StatusCode != tc.status || res.Headers[strings.ToLower(protocol.HeaderError)] != string(tc.code) {
				t.Fatalf("got %d %q, want %d %q", res.StatusCode, res.Headers, tc.status, tc.code)
			}
			if !strings.Contains(string(body), tc.msg) {
				t.Fatalf("body %q does not mention %q", body, tc.msg)
			}
		})
	}
}

func TestHandlerBase64RequestBody(t *testing.T) {
	n := newTestNode(t, 0)
	h := newTestHandler(t, n.reg, nil)
	path := protocol.Path("scores", "Sam")
	ok := base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xfe})
	res, body, _ := invoke(t, h, urlEvent(t, "GET", path, nil, ok, true))
	if res.StatusCode != 200 || string(body) != "567" {
		t.Fatalf("well-formed base64 body: %d %q", res.StatusCode, body)
	}
	res, body, _ = invoke(t, h, urlEvent(t, "GET", path, nil, "not base64!", true))
	if res.StatusCode != 400 || !strings.Contains(string(body), "base64") {
		t.Fatalf("malformed base64 body: %d %q, want 400", res.StatusCode, body)
	}
	// The same text unflagged is an ordinary (ignored) body.
	res, _, _ = invoke(t, h, urlEvent(t, "GET", path, nil, "not base64!", false))
	if res.StatusCode != 200 {
		t.Fatalf("plain body: %d, want 200", res.StatusCode)
	}
}

func TestHandlerBinaryValue(t *testing.T) {
	n := newTestNode(t, 0)
	h := newTestHandler(t, n.reg, nil)
	for range 2 { // the load, then the cached copy
		res, body := get(t, h, "binary", "k")
		if res.StatusCode != 200 || !bytes.Equal(body, allBytes()) {
			t.Fatalf("binary value: %d, %d bytes, differs from 0..255", res.StatusCode, len(body))
		}
		if ct := res.Headers["content-type"]; ct != "application/octet-stream" {
			t.Fatalf("content-type %q", ct)
		}
	}
}

func TestHandlerOversizedValue(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		opts   *protocol.ServerOptions
		status int
	}{
		{"largest that fits", maxValueBytes, nil, 200},
		{"one byte over, caught by the handler", maxValueBytes + 1, nil, 413},
		{"over the server's limit", 1001, &protocol.ServerOptions{MaxValueBytes: 1000}, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newTestNode(t, tc.size)
			h := newTestHandler(t, n.reg, tc.opts)
			res, body, size := invoke(t, h, urlEvent(t, "GET", protocol.Path("big", "k"), nil, "", false))
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%.200s)", res.StatusCode, tc.status, body)
			}
			if size > maxPayloadBytes {
				t.Fatalf("response JSON is %d bytes, over Lambda's %d", size, maxPayloadBytes)
			}
			switch tc.status {
			case 200:
				if len(body) != tc.size {
					t.Fatalf("got %d bytes, want %d", len(body), tc.size)
				}
			case 413:
				if res.Headers[strings.ToLower(protocol.HeaderError)] != string(protocol.CodeTooLarge) ||
					!strings.Contains(string(body), "bytes") {
					t.Fatalf("413 without a clear message: %q %q", res.Headers, body)
				}
			}
		})
	}
}

func TestHandlerAuth(t *testing.T) {
	secret := []byte("s3cret")
	path := protocol.Path("scores", "Jack")
	signed := protoClient(t, secret).NewRequest(t.Context(), testSelf, "scores", "Jack", false)
	wrong := protoClient(t, []byte("other")).NewRequest(t.Context(), testSelf, "scores", "Jack", false)
	unsigned := protoClient(t, nil).NewRequest(t.Context(), testSelf, "scores", "Jack", false)

	t.Run("on", func(t *testing.T) {
		n := newTestNode(t, 0)
		h := newTestHandler(t, n.reg, &protocol.ServerOptions{Secret: secret})
		for name, hdr := range map[string]http.Header{"unsigned": unsigned.Header, "wrong secret": wrong.Header} {
			res, body, _ := invoke(t, h, urlEvent(t, "GET", path, hdr, "", false))
			if res.StatusCode != 401 {
				t.Fatalf("%s: %d %q, want 401", name, res.StatusCode, body)
			}
		}
		if n.loads.Load() != 0 {
			t.Fatalf("rejected requests loaded %d times", n.loads.Load())
		}
		res, body, _ := invoke(t, h, urlEvent(t, "GET", signed.Path, signed.Header, "", false))
		if res.StatusCode != 200 || string(body) != "589" {
			t.Fatalf("signed: %d %q, want 200 589", res.StatusCode, body)
		}
	})
	t.Run("off", func(t *testing.T) {
		n := newTestNode(t, 0)
		h := newTestHandler(t, n.reg, nil)
		res, body, _ := invoke(t, h, urlEvent(t, "GET", path, unsigned.Header, "", false))
		if res.StatusCode != 200 || string(body) != "589" {
			t.Fatalf("unsigned, auth off: %d %q", res.StatusCode, body)
		}
	})
}

func TestHandlerStream(t *testing.T) {
	n := newTestNode(t, 0)
	h := newTestHandler(t, n.reg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := awslambda.NewHandler(h.ServeStream).Invoke(ctx,
		urlEvent(t, "GET", protocol.Path("binary", "k"), nil, "", false))
	if err != nil {
		t.Fatal(err)
	}
	prelude, body, ok := bytes.Cut(raw, make([]byte, 8))
	if !ok {
		t.Fatalf("no prelude separator in %q", raw)
	}
	var p struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(prelude, &p); err != nil || p.StatusCode != 200 {
		t.Fatalf("prelude %q: %v", prelude, err)
	}
	if !bytes.Equal(body, allBytes()) {
		t.Fatalf("streamed body differs from 0..255: %d bytes", len(body))
	}
}

// newTestHandler is a handler over a protocol server for reg with o.
// testSelf is the base URL of the Handlers of the tests.
const testSelf = "https://abc.lambda-url.eu-west-1.on.aws"

func newTestHandler(t testing.TB, reg *cache.Registry, o *protocol.ServerOptions) *handler {
	t.Helper()
	if o == nil {
		o = &protocol.ServerOptions{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Secret != nil && o.Self == "" {
		o.Self = testSelf
	}
	srv, err := protocol.NewServer(reg, o)
	if err != nil {
		t.Fatal(err)
	}
	h, err := newHandler(srv, "")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// protoClient is a protocol client signing with secret (none if empty).
func protoClient(t testing.TB, secret []byte) *protocol.Client {
	t.Helper()
	c, err := protocol.NewClient(&protocol.ClientOptions{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every key round-trips through the Lambda handler, as through the net/http
// binding's routers (adapters/nethttp's TestRandomKeysRoundTripThroughRouters).
func TestRandomKeysRoundTripThroughHandler(t *testing.T) {
	reg := cache.NewRegistry()
	echo := getter.Func(func(_ context.Context, key string) ([]byte, error) { return []byte("v=" + key), nil })
	if _, err := reg.NewGroup("scores", 1<<20, echo, nil); err != nil {
		t.Fatal(err)
	}
	h := newTestHandler(t, reg, nil)
	c := protoClient(t, nil)
	r := rand.New(rand.NewPCG(3, 5))
	for i, key := range keytest.Keys(r, 300) {
		req := c.NewRequest(t.Context(), testSelf, "scores", key, false)
		res, body, _ := invoke(t, h, urlEvent(t, "GET", req.Path, req.Header, "", false))
		if res.StatusCode != 200 || string(body) != "v="+key {
			t.Fatalf("key #%d %q: %d %q", i, key, res.StatusCode, body)
		}
	}
}

// An invoke whose payload is the JSON null (aws lambda invoke --payload
// null, a console test event) reaches the handler as a nil event. It must
// be answered 400: a panic makes aws-lambda-go end the execution
// environment, and its cache with it.
func TestHandlerNullEvent(t *testing.T) {
	n := newTestNode(t, 0)
	h := newTestHandler(t, n.reg, nil)
	for _, serve := range []struct {
		name string
		h    awslambda.Handler
	}{{"ServeURL", awslambda.NewHandler(h.ServeURL)}, {"ServeStream", awslambda.NewHandler(h.ServeStream)}} {
		t.Run(serve.name, func(t *testing.T) {
			var raw []byte
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("a null event panicked: %v", r)
					}
				}()
				raw, err = serve.h.Invoke(context.Background(), []byte("null"))
			}()
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			var res struct {
				StatusCode int `json:"statusCode"`
			}
			if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&res); err != nil || res.StatusCode != http.StatusBadRequest {
				t.Fatalf("answer %.200q (%v), want a 400", raw, err)
			}
		})
	}
}
