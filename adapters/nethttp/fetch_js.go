//go:build js && wasm

package nethttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"syscall/js"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// errFetchUnavailable is returned by fetchTransport.roundTrip when the
// JavaScript host has no global fetch function (node.js before 18): a
// failure of every peer request, which the group answers with local
// loads, and which only a newer host cures.
var errFetchUnavailable = errors.New("geecache/nethttp: the JavaScript host has no global fetch()")

// errBodyClosed is what a Read of a closed response body returns.
var errBodyClosed = errors.New("geecache/nethttp: read on a closed response body")

// A fetchTransport sends requests with the JavaScript host's global
// fetch() (WHATWG Fetch): in browsers, Web and Service Workers, Deno,
// Cloudflare Workers and node.js 18 or later. It is how every Client and
// Pool sends under GOOS=js: it takes a protocol request as it is, so that
// no net/http is linked.
//
// The request's context aborts the fetch (AbortController), also while
// the body is read. The response body is streamed: each Read takes at
// most one chunk from the host, so a reader that stops early (the
// protocol's size limit) leaves the rest unread, and Close cancels it.
// Redirects are not followed. Requests carry no cookies or other
// credentials of the host (credentials "omit").
//
// fetch() takes a request body whole; it is bounded by the MaxValueBytes
// of the Client or Pool (a PUT's body is one value); 64 MiB, the
// protocol's default limit, for the zero value.
type fetchTransport struct {
	maxBody int64 // the largest request body sent; 0: protocol.DefaultMaxValueBytes
}

// roundTrip sends a request to url with fetch(). It returns once the
// response headers have arrived; the body is read as the caller reads it.
func (t *fetchTransport) roundTrip(ctx context.Context, method, url string, header protocol.Header, body []byte) (peerResponse, error) {
	limit := t.maxBody
	if limit == 0 {
		limit = protocol.DefaultMaxValueBytes
	}
	if int64(len(body)) > limit {
		return peerResponse{}, fmt.Errorf("geecache/nethttp: request body of %d bytes is over the limit of %d", len(body), limit)
	}
	global := js.Global()
	fetch := global.Get("fetch")
	if fetch.Type() != js.TypeFunction {
		return peerResponse{}, errFetchUnavailable
	}
	if err := ctx.Err(); err != nil {
		return peerResponse{}, err
	}
	ac := global.Get("AbortController").New()
	abort := func() { ac.Call("abort") }

	init := global.Get("Object").New()
	init.Set("method", method)
	init.Set("redirect", "manual")
	init.Set("credentials", "omit")
	init.Set("signal", ac.Get("signal"))
	headers := global.Get("Headers").New()
	for k, vs := range header {
		for _, v := range vs {
			headers.Call("append", k, v)
		}
	}
	init.Set("headers", headers)
	if len(body) > 0 {
		buf := global.Get("Uint8Array").New(len(body))
		js.CopyBytesToJS(buf, body)
		init.Set("body", buf)
	}

	res, err := await(ctx, fetch.Invoke(url, init), abort)
	if err != nil {
		return peerResponse{}, fmt.Errorf("fetch %s %s: %w", method, url, err)
	}
	return newFetchResponse(ctx, res, abort)
}

// newFetchResponse turns a JS Response into a peerResponse whose body
// streams from res.body.
func newFetchResponse(ctx context.Context, res js.Value, abort func()) (peerResponse, error) {
	status := res.Get("status").Int()
	header := protocol.Header{}
	it := res.Get("headers").Call("entries")
	for {
		n := it.Call("next")
		if n.Get("done").Bool() {
			break
		}
		kv := n.Get("value")
		header.Add(kv.Index(0).String(), kv.Index(1).String())
	}
	size := int64(-1)
	if cl := header.Get("Content-Length"); cl != "" && header.Get("Content-Encoding") == "" {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 {
			abort()
			return peerResponse{}, fmt.Errorf("geecache/nethttp: fetch: bad Content-Length %q", cl)
		}
		size = n
	}
	var body io.ReadCloser = noBody{}
	if b := res.Get("body"); b.Truthy() {
		body = &fetchBody{ctx: ctx, reader: b.Call("getReader"), abort: abort}
	}
	return peerResponse{status: status, header: header, size: size, body: body}, nil
}

// noBody is the body of an answer that has none.
type noBody struct{}

func (noBody) Read([]byte) (int, error) { return 0, io.EOF }
func (noBody) Close() error             { return nil }

// fetchBody reads a ReadableStream one chunk at a time.
type fetchBody struct {
	ctx     context.Context
	reader  js.Value // ReadableStreamDefaultReader
	abort   func()
	pending []byte
	err     error // sticky
}

func (b *fetchBody) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		r, err := await(b.ctx, b.reader.Call("read"), b.abort)
		if err != nil {
			b.err = err
			return 0, err
		}
		if r.Get("done").Bool() {
			b.err = io.EOF
			return 0, io.EOF
		}
		chunk := r.Get("value")
		b.pending = make([]byte, chunk.Get("byteLength").Int())
		js.CopyBytesToGo(b.pending, chunk)
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// Close cancels the rest of the stream.
func (b *fetchBody) Close() error {
	if b.err != io.EOF {
		// cancel rejects if the stream has failed (an abort); Boolean is
		// a built-in no-op handler, so the rejection is not reported as
		// unhandled.
		b.reader.Call("cancel").Call("catch", js.Global().Get("Boolean"))
	}
	if b.err == nil || b.err == io.EOF {
		b.err = errBodyClosed
	}
	b.pending = nil
	return nil
}

// await waits for the promise p to settle and returns its value or its
// rejection as an error. If ctx ends first, it calls abort, waits for p
// to settle (aborting rejects it), and returns ctx's error.
func await(ctx context.Context, p js.Value, abort func()) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	done := make(chan result, 1)
	onOK := js.FuncOf(func(_ js.Value, args []js.Value) any {
		done <- result{v: arg0(args)}
		return nil
	})
	onErr := js.FuncOf(func(_ js.Value, args []js.Value) any {
		done <- result{err: jsError(arg0(args))}
		return nil
	})
	defer onOK.Release()
	defer onErr.Release()
	p.Call("then", onOK, onErr)
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		abort()
		<-done // the functions must live until the promise settles
		return js.Undefined(), ctx.Err()
	}
}

func arg0(args []js.Value) js.Value {
	if len(args) == 0 {
		return js.Undefined()
	}
	return args[0]
}

// jsError turns a rejection reason into an error with its message and,
// for fetch's TypeError, its cause (such as ECONNREFUSED under node).
func jsError(v js.Value) error {
	if v.Type() != js.TypeObject {
		return errors.New(v.String())
	}
	msg := v.Call("toString").String()
	if c := v.Get("cause"); c.Type() == js.TypeObject && c.Get("toString").Type() == js.TypeFunction {
		msg += ": " + c.Call("toString").String()
	}
	return errors.New(msg)
}
