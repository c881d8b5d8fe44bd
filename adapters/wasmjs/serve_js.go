//go:build js && wasm

package wasmjs

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
	"unicode/utf8"
	"unsafe"
)

// Func returns the JavaScript function that answers protocol requests
// with h (see the package documentation for its arguments and result):
// the node's nethttp.Pool, which holds the settings the node serves with
// (the nethttp.Cluster every node shares, in PoolOptions.Cluster), given
// there once. Give it to the host, for example with
//
//	js.Global().Set("geecacheServe", wasmjs.Func(pool))
//
// and call its Release method when the host no longer calls it.
func Func(h http.Handler) js.Func {
	hs := newHost()
	return js.FuncOf(func(_ js.Value, args []js.Value) any { return hs.serve(h, args) })
}

// host holds the JavaScript built-ins a Func uses, looked up once: each
// lookup is a call out of wasm.
type host struct {
	promise, uint8Array, array, typeError, errorCtor js.Value
	entries, fromEntries, parse                      js.Value
}

func newHost() *host {
	g := js.Global()
	object, json := g.Get("Object"), g.Get("JSON")
	return &host{
		promise:     g.Get("Promise"),
		uint8Array:  g.Get("Uint8Array"),
		array:       g.Get("Array"),
		typeError:   g.Get("TypeError"),
		errorCtor:   g.Get("Error"),
		entries:     object.Get("entries").Call("bind", object),
		fromEntries: object.Get("fromEntries").Call("bind", object),
		parse:       json.Get("parse").Call("bind", json),
	}
}

// A pending is one request being answered. Its goroutine settles it: with
// the answer (done), or, once the host has been handed a Promise
// (async), by resolving or rejecting that Promise.
type pending struct {
	mu              sync.Mutex
	done, async     bool
	result          js.Value // the answer, or the Error to reject with
	failed          bool     // result is an Error
	resolve, reject js.Value // the Promise's, once async
}

// serve answers one call of the function. The request is answered by a
// goroutine, so that a load that waits on JavaScript (a peer's fetch, a
// timer) cannot deadlock the host's event loop; this one yields to it
// once, and a request answered from memory is answered then: the answer
// goes back as it is, with no Promise to make (each one costs calls
// between Go and JavaScript, and a Go callback for its executor). Only an
// answer still pending after the yield comes as a Promise.
func (h *host) serve(hd http.Handler, args []js.Value) any {
	req, err := h.parseArgs(args)
	if err != nil {
		return h.promise.Call("reject", h.typeError.New("geecache: "+err.Error()))
	}
	c := &pending{}
	go c.run(h, hd, req)
	runtime.Gosched() // the goroutine runs now, until it is done or waits
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		if c.failed {
			return h.promise.Call("reject", c.result)
		}
		return c.result
	}
	c.async = true
	var p js.Value
	executor := js.FuncOf(func(_ js.Value, a []js.Value) any {
		c.resolve, c.reject = a[0], a[1]
		return nil
	})
	p = h.promise.New(executor) // calls executor before it returns
	executor.Release()
	return p
}

// run answers req with hd and settles c.
func (c *pending) run(h *host, hd http.Handler, req request) {
	v, failed := h.answer(hd, req)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.async:
		c.done, c.result, c.failed = true, v, failed
	case failed:
		c.reject.Invoke(v)
	default:
		c.resolve.Invoke(v)
	}
}

// request is what the host passed.
type request struct {
	method, path string
	header       http.Header
	signal       js.Value // an AbortSignal, or undefined
	body         []byte
}

// answer serves req with hd and returns the response object, or the Error
// to reject with.
func (h *host) answer(hd http.Handler, req request) (v js.Value, failed bool) {
	defer func() {
		if r := recover(); r != nil {
			v, failed = h.errorCtor.New(fmt.Sprintf("geecache: serve panicked: %v", r)), true
		}
	}()
	ctx := newSignalContext(req.signal)
	defer ctx.release()
	// The path is unescaped, not resolved: URL.EscapedPath gives it back
	// as it came, and dot segments are left alone.
	p, err := url.PathUnescape(req.path)
	if err != nil || !strings.HasPrefix(req.path, "/") {
		p = "" // EscapedPath falls back to escaping Path: the handler refuses it (400)
	}
	r := (&http.Request{
		Method: req.method, URL: &url.URL{Path: p, RawPath: req.path}, RequestURI: req.path,
		// HTTP/1.0: the host answers once, so no interim "102
		// Processing" can reach the caller, and the handler need not
		// prepare one.
		Proto: "HTTP/1.0", ProtoMajor: 1, ProtoMinor: 0,
		Header: req.header, Body: http.NoBody, Host: "wasm",
	}).WithContext(ctx)
	if req.body != nil {
		r.Body, r.ContentLength = readCloser{bytes.NewReader(req.body)}, int64(len(req.body))
	}
	w := &recorder{header: make(http.Header, 4), status: http.StatusOK}
	hd.ServeHTTP(w, r)
	return h.toJS(w), false
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// recorder is the http.ResponseWriter an answer is written to before it
// goes to JavaScript in one piece.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   []byte
}

func (w *recorder) Header() http.Header { return w.header }

// WriteHeader keeps the first final status; an informational one (a
// peer's "102 Processing") has no meaning for a host that answers once.
func (w *recorder) WriteHeader(status int) {
	if status >= 200 && !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	w.wrote = true
	if w.body == nil {
		w.body = p[:len(p):len(p)] // one Write (a cached value): sent as it is, copied once, into JavaScript
		return len(p), nil
	}
	w.body = append(w.body[:len(w.body):len(w.body)], p...)
	return len(p), nil
}

// parseArgs reads (method, path, headers[, signal[, body]]).
func (h *host) parseArgs(args []js.Value) (request, error) {
	req := request{signal: js.Undefined()}
	if len(args) < 3 {
		return req, errors.New("serve(method, path, headers[, signal[, body]]) needs 3 arguments")
	}
	if args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
		return req, errors.New("serve: method and path must be strings")
	}
	hdr, err := h.header(args[2])
	if err != nil {
		return req, err
	}
	req.header = hdr
	if len(args) > 3 && args[3].Truthy() {
		req.signal = args[3]
		if req.signal.Type() != js.TypeObject || req.signal.Get("addEventListener").Type() != js.TypeFunction {
			return req, errors.New("serve: signal must be an AbortSignal")
		}
	}
	if len(args) > 4 && args[4].Truthy() {
		b := args[4]
		if b.Type() != js.TypeObject || !b.InstanceOf(h.uint8Array) {
			return req, errors.New("serve: body must be a Uint8Array")
		}
		req.body = make([]byte, b.Length())
		js.CopyBytesToGo(req.body, b)
	}
	req.method, req.path = args[0].String(), args[1].String()
	return req, nil
}

// header converts the request's headers into an http.Header: node's
// IncomingMessage.rawHeaders (an array of names and values, in turn, or
// that array joined with "\n", the cheapest to pass), a
// Headers object (or any iterable of [name, value]), or a plain object of
// names to strings or arrays of strings (node's IncomingMessage.headers).
// It crosses into JavaScript a fixed number of times, however many
// headers there are: the array is joined into one string, one line per
// name and per value, and an object's Object.entries(headers).join("\n")
// gives one line per header, "name,value", an array value joined with
// commas, the way HTTP combines repeated fields. Names and values cannot
// contain a newline, and names cannot contain a comma.
func (h *host) header(v js.Value) (http.Header, error) {
	hdr := make(http.Header, 4)
	switch {
	case v.IsUndefined() || v.IsNull():
		return hdr, nil
	case v.Type() == js.TypeString: // rawHeaders joined by the host: one string, the fewest calls
		return rawHeader(hdr, v.String())
	case v.Type() != js.TypeObject:
		return nil, errors.New("serve: headers must be an object")
	case v.InstanceOf(h.array): // rawHeaders: the cheapest, for the host too (node builds headers on first use)
		return rawHeader(hdr, v.Call("join", "\n").String())
	case v.Get("entries").Type() == js.TypeFunction: // Headers, Map
		v = h.fromEntries.Invoke(v)
	}
	text := h.entries.Invoke(v).Call("join", "\n").String()
	if text == "" {
		return hdr, nil
	}
	for line := range strings.SplitSeq(text, "\n") {
		name, value, ok := strings.Cut(line, ",")
		if !ok || name == "" {
			return nil, fmt.Errorf("serve: malformed header line %q", line)
		}
		hdr.Add(name, value)
	}
	return hdr, nil
}

// rawHeader adds the headers of text, names and values on lines of their
// own in turn, to hdr.
func rawHeader(hdr http.Header, text string) (http.Header, error) {
	if text == "" {
		return hdr, nil
	}
	for {
		name, rest, ok := strings.Cut(text, "\n")
		if !ok || name == "" {
			return nil, fmt.Errorf("serve: raw headers: a name without a value, or an empty name (%q)", name)
		}
		value, next, more := strings.Cut(rest, "\n")
		hdr.Add(name, value)
		if !more {
			return hdr, nil
		}
		text = next
	}
}

// toJS turns a response into {status, headers, body}. It is made by
// JSON.parse from one JSON text (one call, where setting each field from
// Go is a call per field and per string, and each object handed to Go
// costs it a finalizer): the status, the headers, and a body that is valid
// UTF-8 as a string (sent as the same bytes, since hosts send a string
// body as UTF-8); any other body is copied into a Uint8Array.
func (h *host) toJS(r *recorder) js.Value {
	text := utf8.Valid(r.body)
	b := make([]byte, 0, 192+len(r.body)+len(r.body)/8)
	b = append(b, `{"status":`...)
	b = strconv.AppendInt(b, int64(r.status), 10)
	b = append(b, `,"headers":{`...)
	for k, vs := range r.header {
		if k == "Content-Length" { // set below, from the body
			continue
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, strings.Join(vs, ", "))
		b = append(b, ',')
	}
	b = append(b, `"Content-Length":"`...)
	b = strconv.AppendInt(b, int64(len(r.body)), 10)
	b = append(b, `"}`...)
	if text {
		b = append(b, `,"body":`...)
		b = appendJSONString(b, string(r.body))
	}
	b = append(b, '}')
	out := h.parse.Invoke(unsafe.String(unsafe.SliceData(b), len(b))) // b is not used again
	if !text {
		body := h.uint8Array.New(len(r.body))
		js.CopyBytesToJS(body, r.body)
		out.Set("body", body)
	}
	return out
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c) // UTF-8 as it is
		}
	}
	return append(b, '"')
}
