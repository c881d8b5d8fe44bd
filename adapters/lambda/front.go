package lambda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// InvokePath is the path of the Lambda runtime's invoke endpoint, as served
// by the AWS Lambda Runtime Interface Emulator (aws-lambda-rie):
// POST http://HOST:PORT/2015-03-31/functions/function/invocations.
const InvokePath = "/2015-03-31/functions/function/invocations"

// Limits of a Function URL in BUFFERED mode.
const (
	// MaxPayloadBytes is the largest request or response payload (the
	// whole event or response JSON) that Lambda accepts: 6 MiB.
	MaxPayloadBytes = 6 << 20
	// maxRequestBody bounds the HTTP body a Front accepts. Base64 makes a
	// body a third larger, and the rest of the event needs room too.
	maxRequestBody = MaxPayloadBytes/4*3 - 64<<10
)

// Errors a Front reports (to its logger, and as a 502 or 503 to its client).
var (
	// ErrFunctionError: the function returned an error instead of a
	// response (the runtime still answers the invoke with HTTP 200).
	ErrFunctionError = errors.New("geecache/lambda: function error")
	// ErrBadInvokeResponse: the runtime's answer is not a valid Function URL
	// response (malformed JSON or base64, or over MaxPayloadBytes).
	ErrBadInvokeResponse = errors.New("geecache/lambda: invalid invoke response")
)

// A Front plays the part of a Lambda Function URL in front of Lambda
// runtime invoke endpoints, such as local aws-lambda-rie instances: it turns
// a plain HTTP request into an events.LambdaFunctionURLRequest (BUFFERED
// format), invokes a runtime with it, and turns the
// events.LambdaFunctionURLResponse back into HTTP. A function error becomes
// a 502 Bad Gateway.
//
// Each endpoint is treated as one execution environment: it is sent one
// invoke at a time (the emulator crashes on overlapping invokes), and a
// request waits, as long as its context allows, for a free endpoint. Give a
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
}

// A FrontOption configures a Front.
type FrontOption func(*Front)

// WithInvokeTimeout bounds each invoke, including the wait for a free
// endpoint (default 30s; Lambda's own limit is 15 minutes).
func WithInvokeTimeout(d time.Duration) FrontOption {
	return func(f *Front) { f.timeout = d }
}

// WithFrontLogger sets the logger for invoke failures (default
// slog.Default()).
func WithFrontLogger(l *slog.Logger) FrontOption {
	return func(f *Front) { f.log = l }
}

// WithFrontClient replaces the HTTP client used to invoke the runtime.
// The default keeps connections alive, one idle connection per endpoint.
func WithFrontClient(c *http.Client) FrontOption {
	return func(f *Front) { f.client = c }
}

// NewFront returns a Front that invokes the given endpoints, each the full
// URL of a runtime invoke endpoint, such as
// "http://127.0.0.1:9001"+InvokePath.
func NewFront(endpoints []string, opts ...FrontOption) (*Front, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("geecache/lambda: NewFront needs at least one endpoint")
	}
	f := &Front{
		free:    make(chan string, len(endpoints)),
		timeout: 30 * time.Second,
		log:     slog.Default(),
	}
	for _, ep := range endpoints {
		if !strings.HasPrefix(ep, "http://") && !strings.HasPrefix(ep, "https://") {
			return nil, fmt.Errorf("geecache/lambda: endpoint %q is not an http(s) URL", ep)
		}
		f.free <- ep
	}
	for _, o := range opts {
		o(f)
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

// Close closes the Front's idle connections to its endpoints.
func (f *Front) Close() {
	f.client.CloseIdleConnections()
}

// ServeHTTP serves r by invoking a runtime with it.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), f.timeout)
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
	raw, err := f.invoke(ctx, ep, payload)
	f.free <- ep
	if err != nil {
		f.fail(w, r, http.StatusBadGateway, err)
		return
	}
	resp, err := decodeURLResponse(raw)
	if err != nil {
		f.fail(w, r, http.StatusBadGateway, err)
		return
	}
	h := w.Header()
	for k, v := range resp.header {
		h[k] = v
	}
	h.Set("Content-Length", strconv.Itoa(len(resp.body)))
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
}

// invoke posts payload to the endpoint and returns the function's answer.
func (f *Front) invoke(ctx context.Context, ep string, payload []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("geecache/lambda: invoke %s: %w", ep, err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("geecache/lambda: invoke %s: %w", ep, err)
	}
	defer res.Body.Close()
	// One byte over the limit tells a too-large answer from one that fits.
	raw, err := io.ReadAll(io.LimitReader(res.Body, MaxPayloadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("geecache/lambda: invoke %s: reading answer: %w", ep, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // keep the connection reusable
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("geecache/lambda: invoke %s: runtime answered %s: %.200s", ep, res.Status, raw)
	}
	if len(raw) > MaxPayloadBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrBadInvokeResponse, MaxPayloadBytes)
	}
	if res.Header.Get("X-Amz-Function-Error") != "" {
		return nil, fmt.Errorf("%w: %.500s", ErrFunctionError, raw)
	}
	return raw, nil
}

// fail logs err and answers with status, unless the client has gone.
func (f *Front) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	if r.Context().Err() != nil {
		return
	}
	f.log.LogAttrs(r.Context(), slog.LevelWarn, "geecache/lambda: front",
		slog.String("method", r.Method), slog.String("path", r.URL.EscapedPath()),
		slog.Int("status", status), slog.Any("err", err))
	http.Error(w, err.Error(), status)
}
