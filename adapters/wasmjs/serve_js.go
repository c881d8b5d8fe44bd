//go:build js && wasm

package wasmjs

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall/js"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// Func returns the JavaScript function that answers protocol requests
// with h (see the package documentation for its arguments and result):
// the node's nethttp.Pool, which holds the settings the node serves with
// (the nethttp.Cluster every node shares, in PoolOptions.Cluster), given
// there once. Give it
// to the host, for example with
//
//	js.Global().Set("geecacheServe", wasmjs.Func(pool))
//
// and call its Release method when the host no longer calls it.
func Func(h http.Handler) js.Func {
	hs := newHost()
	return js.FuncOf(func(_ js.Value, args []js.Value) any {
		req, signal, err := hs.parseArgs(args)
		if err != nil {
			return hs.promise.Call("reject", hs.typeError.New("geecache: "+err.Error()))
		}
		var resolve, reject js.Value
		executor := js.FuncOf(func(_ js.Value, a []js.Value) any {
			resolve, reject = a[0], a[1]
			return nil
		})
		p := hs.promise.New(executor) // calls executor before it returns
		executor.Release()
		// The goroutine runs before control goes back to JavaScript, so a
		// request answered from memory is answered within this call; a
		// load that waits (on a peer's fetch, a timer) lets the event
		// loop go on.
		go hs.answer(h, req, signal, resolve, reject)
		return p
	})
}

// host holds the JavaScript built-ins a Func uses, looked up once: each
// lookup is a call out of wasm.
type host struct {
	promise, object, uint8Array, array, typeError, errorCtor js.Value
	entries, fromEntries                                     js.Value
}

func newHost() *host {
	g := js.Global()
	object := g.Get("Object")
	return &host{
		promise:     g.Get("Promise"),
		object:      object,
		uint8Array:  g.Get("Uint8Array"),
		array:       g.Get("Array"),
		typeError:   g.Get("TypeError"),
		errorCtor:   g.Get("Error"),
		entries:     object.Get("entries").Call("bind", object),
		fromEntries: object.Get("fromEntries").Call("bind", object),
	}
}

// answer serves req with hd and settles the Promise.
func (h *host) answer(hd http.Handler, req protocol.Request, signal, resolve, reject js.Value) {
	defer func() {
		if r := recover(); r != nil {
			reject.Invoke(h.errorCtor.New(fmt.Sprintf("geecache: serve panicked: %v", r)))
		}
	}()
	ctx := newSignalContext(signal)
	defer ctx.release()
	// The path is parsed, not resolved: url.Parse keeps it escaped as it
	// came (URL.EscapedPath gives it back) and leaves dot segments alone.
	r, err := http.NewRequestWithContext(ctx, req.Method, req.Path, nil)
	if err != nil {
		reject.Invoke(h.typeError.New("geecache: serve: " + err.Error()))
		return
	}
	r.RequestURI, r.Header = req.Path, req.Header
	// HTTP/1.0: the host answers once, so no interim "102 Processing"
	// can reach the caller, and the handler need not prepare one.
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.0", 1, 0
	w := &recorder{header: http.Header{}, status: http.StatusOK}
	hd.ServeHTTP(w, r)
	resolve.Invoke(h.toJS(w))
}

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
	w.body = append(w.body, p...)
	return len(p), nil
}

// parseArgs reads (method, path, headers[, signal]).
func (h *host) parseArgs(args []js.Value) (protocol.Request, js.Value, error) {
	signal := js.Undefined()
	if len(args) < 3 {
		return protocol.Request{}, signal, errors.New("serve(method, path, headers[, signal]) needs 3 arguments")
	}
	if args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
		return protocol.Request{}, signal, errors.New("serve: method and path must be strings")
	}
	hdr, err := h.header(args[2])
	if err != nil {
		return protocol.Request{}, signal, err
	}
	if len(args) > 3 && args[3].Truthy() {
		signal = args[3]
		if signal.Type() != js.TypeObject || signal.Get("addEventListener").Type() != js.TypeFunction {
			return protocol.Request{}, signal, errors.New("serve: signal must be an AbortSignal")
		}
	}
	return protocol.Request{Method: args[0].String(), Path: args[1].String(), Header: hdr}, signal, nil
}

// header converts a Headers object (or any iterable of [name, value]), or
// a plain object of names to strings or arrays of strings, into an
// http.Header. It crosses into JavaScript a fixed number of times, however
// many headers there are: Object.entries(headers).join("\n") gives one
// line per header, "name,value", and an array value comes joined with
// commas, the way HTTP combines repeated fields. Names and values cannot
// contain a newline, and names cannot contain a comma.
func (h *host) header(v js.Value) (http.Header, error) {
	hdr := http.Header{}
	switch {
	case v.IsUndefined() || v.IsNull():
		return hdr, nil
	case v.Type() != js.TypeObject:
		return nil, errors.New("serve: headers must be an object")
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

// toJS turns a response into {status, headers, body}.
func (h *host) toJS(r *recorder) js.Value {
	hdr := h.object.New()
	for k, vs := range r.header {
		if k != "Content-Length" { // set below, from the body: each Set is a call into JavaScript
			hdr.Set(k, strings.Join(vs, ", "))
		}
	}
	hdr.Set("Content-Length", strconv.Itoa(len(r.body)))
	body := h.uint8Array.New(len(r.body))
	js.CopyBytesToJS(body, r.body)
	out := h.object.New()
	out.Set("status", r.status)
	out.Set("headers", hdr)
	out.Set("body", body)
	return out
}
