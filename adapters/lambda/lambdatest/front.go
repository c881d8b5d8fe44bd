package lambdatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/geecache/geecache/adapters/lambda/internal/urlevent"
	"github.com/geecache/geecache/cache"
)

// invokePath is the path of the Lambda runtime's invoke endpoint, as
// served by the AWS Lambda Runtime Interface Emulator (aws-lambda-rie):
// POST http://HOST:PORT/2015-03-31/functions/function/invocations.
const invokePath = "/2015-03-31/functions/function/invocations"

// Limits of a Function URL.
const (
	// maxPayloadBytes is the largest request or response payload (the
	// whole event or response JSON) that Lambda accepts in BUFFERED
	// mode: 6 MiB.
	maxPayloadBytes = 6 << 20
	// maxStreamPayloadBytes is the largest RESPONSE_STREAM answer a Front
	// passes on (prelude and body): 200 MB, Lambda's documented maximum
	// for streamed responses.
	maxStreamPayloadBytes = 200_000_000
	// maxRequestBody bounds the HTTP body a Front accepts. Base64 makes a
	// body a third larger, and the rest of the event needs room too.
	maxRequestBody = maxPayloadBytes/4*3 - 64<<10
)

// A Front plays the part of a Lambda Function URL in front of Lambda
// runtime invoke endpoints, such as local aws-lambda-rie instances: it turns
// a plain HTTP request into an events.LambdaFunctionURLRequest, invokes a
// runtime with it, and turns the function's answer back into HTTP, in
// either invoke mode: an events.LambdaFunctionURLResponse (BUFFERED, at
// most 6 MiB), or the RESPONSE_STREAM format that the emulator passes
// through raw (a JSON prelude with status and headers, 8 NUL bytes, the
// body; at most 200 MB, Lambda's documented maximum). A function error
// (the runtime still answers the invoke with HTTP 200), or an answer that
// is not a valid Function URL response, becomes a 502 Bad Gateway, and
// goes to the Front's log.
//
// Each endpoint is treated as one execution environment: it is sent one
// invoke at a time (the emulator crashes on overlapping invokes), and a
// request waits, as long as its context allows, for a free endpoint. An
// invoke whose caller leaves still runs to its end, as the function does
// (or to the invoke timeout), before its endpoint takes the next one. Give a
// Front several endpoints (several emulator processes of the same function)
// to model a function with several concurrent execution environments, each
// with its own memory.
//
// With one endpoint per node, two nodes that each wait for the other's
// answer (a client request on A needs B while a request on B needs A) wait
// until the peer client's timeout, after which each loads the key itself;
// real Lambda starts another execution environment instead.
//
// A Front is safe for concurrent use. Users run Lambda nodes locally with
// it; this package's integration test uses it.
type Front struct {
	free    chan string // endpoints not busy with an invoke
	client  *http.Client
	timeout time.Duration
	log     *slog.Logger
	running sync.WaitGroup // invokes, including those whose caller left
}

// FrontOptions configures a Front. As everywhere in GeeCache, the zero
// value of a field means its default and a nil pointer means all defaults.
type FrontOptions struct {
	// InvokeTimeout bounds each invoke, including the wait for a free
	// endpoint. 0 means 30 s (Lambda's own limit is 15 minutes).
	InvokeTimeout time.Duration

	// Logger receives invoke failures. Nil means slog.Default().
	Logger *slog.Logger

	// Client invokes the runtime. Nil means a keep-alive client with one
	// idle connection per endpoint.
	Client *http.Client
}

// NewFront returns a Front that invokes the given endpoints, each the base
// URL of a Lambda runtime (the emulator's
// --runtime-interface-emulator-address, such as "http://127.0.0.1:9001",
// whose invoke endpoint is /2015-03-31/functions/function/invocations) or
// the full URL of its invoke endpoint (as NewRuntime returns). opts may
// be nil. It fails, with an error wrapping cache.ErrConfig, for endpoints
// or options that cannot work.
func NewFront(endpoints []string, opts *FrontOptions) (*Front, error) {
	if len(endpoints) == 0 {
		return nil, fmt.Errorf("geecache: %w: NewFront needs at least one endpoint", cache.ErrConfig)
	}
	var o FrontOptions
	if opts != nil {
		o = *opts
	}
	if o.InvokeTimeout < 0 {
		return nil, fmt.Errorf("geecache: %w: NewFront: InvokeTimeout %v is negative", cache.ErrConfig, o.InvokeTimeout)
	}
	f := &Front{
		free:    make(chan string, len(endpoints)),
		timeout: o.InvokeTimeout,
		log:     o.Logger,
		client:  o.Client,
	}
	if f.timeout == 0 {
		f.timeout = 30 * time.Second
	}
	if f.log == nil {
		f.log = slog.Default()
	}
	for _, ep := range endpoints {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("geecache: %w: endpoint %q is not an http(s) URL", cache.ErrConfig, ep)
		}
		if u.Path == "" || u.Path == "/" {
			ep = strings.TrimSuffix(ep, "/") + invokePath
		}
		f.free <- ep
	}
	if f.client == nil {
		f.client = &http.Client{Transport: &http.Transport{
			Proxy:                 nil, // local runtimes only; never via a proxy
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          len(endpoints) + 4,
			MaxIdleConnsPerHost:   len(endpoints) + 4,
			IdleConnTimeout:       90 * time.Second,
			DisableCompression:    true,
			ResponseHeaderTimeout: 0, // bounded by the invoke timeout instead
		}}
	}
	return f, nil
}

// Close waits for the invokes whose callers have left (each bounded by
// the invoke timeout) and closes the Front's idle connections to its
// endpoints. Stop serving the Front before calling it.
func (f *Front) Close() {
	f.running.Wait()
	f.client.CloseIdleConnections()
}

// ServeHTTP serves r by invoking a runtime with it.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	deadline := time.Now().Add(f.timeout)
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		http.Error(w, "request body too large for a Lambda invoke", http.StatusRequestEntityTooLarge)
		return
	}
	payload, err := encodeURLRequest(r, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}

	var ep string
	select {
	case ep = <-f.free:
	case <-ctx.Done():
		f.fail(w, r, http.StatusServiceUnavailable, fmt.Errorf("waiting for a free endpoint: %w", ctx.Err()))
		return
	}
	// The invoke runs to its end even if the caller leaves: the runtime
	// runs the function to its end anyway, and the endpoint takes no other
	// invoke until then (an emulator crashes on overlapping invokes).
	done := make(chan invoked, 1)
	f.running.Add(1)
	go func() {
		defer f.running.Done()
		ictx, icancel := context.WithDeadline(context.WithoutCancel(r.Context()), deadline)
		raw, err := f.invoke(ictx, ep, payload)
		icancel()
		f.free <- ep
		done <- invoked{raw, err}
	}()
	var res invoked
	select {
	case res = <-done:
	case <-ctx.Done():
		f.fail(w, r, http.StatusBadGateway, fmt.Errorf("invoke %s: %w", ep, ctx.Err()))
		return
	}
	if res.err != nil {
		f.fail(w, r, http.StatusBadGateway, res.err)
		return
	}
	raw := res.raw
	resp, err := urlevent.Decode(raw)
	if err == nil && !resp.Streamed && len(raw) > maxPayloadBytes {
		err = fmt.Errorf("%w: over %d bytes", urlevent.ErrBadResponse, maxPayloadBytes)
	}
	if err != nil {
		f.fail(w, r, http.StatusBadGateway, err)
		return
	}
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	h.Set("Content-Length", strconv.Itoa(len(resp.Body)))
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

// invoked is the outcome of an invoke.
type invoked struct {
	raw []byte
	err error
}

// invoke posts payload to the endpoint and returns the function's answer.
func (f *Front) invoke(ctx context.Context, ep string, payload []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("invoke %s: %w", ep, err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("invoke %s: %w", ep, err)
	}
	defer res.Body.Close()
	// One byte over the limit tells a too-large answer from one that fits;
	// the smaller limit of a BUFFERED answer is checked once decoded.
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxStreamPayloadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("invoke %s: reading answer: %w", ep, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // keep the connection reusable
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("invoke %s: runtime answered %s: %.200s", ep, res.Status, raw)
	}
	if len(raw) > maxStreamPayloadBytes {
		return nil, fmt.Errorf("%w: over %d bytes", urlevent.ErrBadResponse, maxStreamPayloadBytes)
	}
	if res.Header.Get("X-Amz-Function-Error") != "" {
		return nil, fmt.Errorf("%w: %.500s", urlevent.ErrFunctionError, raw)
	}
	return raw, nil
}

// fail logs err and answers with status, unless the client has gone.
func (f *Front) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	if r.Context().Err() != nil {
		return
	}
	f.log.LogAttrs(r.Context(), slog.LevelWarn, "geecache: lambdatest front",
		slog.String("method", r.Method), slog.String("path", r.URL.EscapedPath()),
		slog.Int("status", status), slog.Any("err", err))
	http.Error(w, err.Error(), status)
}

// NewRuntime serves a Lambda runtime's invoke endpoint in-process, for
// tests without the emulator: each POST to the invoke path runs invoke (for
// example awslambda.NewHandler(node.ServeURL).Invoke, the same JSON path as
// the real runtime) and answers its result with HTTP 200, as the emulator
// does even for a function error. It returns the server (close it when
// done) and the endpoint to give NewFront.
func NewRuntime(invoke func(ctx context.Context, payload []byte) ([]byte, error)) (*httptest.Server, string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != invokePath {
			http.Error(w, "not the invoke endpoint", http.StatusNotFound)
			return
		}
		payload, err := io.ReadAll(io.LimitReader(r.Body, maxPayloadBytes+1))
		if err != nil {
			return
		}
		out, err := invoke(r.Context(), payload)
		if err != nil {
			out, _ = json.Marshal(map[string]string{"errorMessage": err.Error(), "errorType": "errorString"})
		}
		_, _ = w.Write(out)
	}))
	return srv, srv.URL + invokePath
}
