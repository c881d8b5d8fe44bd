//go:build js && wasm

package wasmjs

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall/js"

	"github.com/geecache/geecache/adapters/protocol"
)

// Func returns the JavaScript function that answers protocol requests
// with srv (see the package documentation for its arguments and result).
// Give it to the host, for example with
//
//	js.Global().Set("geecacheServe", wasmjs.Func(srv))
//
// and call its Release method when the host no longer calls it.
func Func(srv *protocol.Server) js.Func {
	h := newHost()
	return js.FuncOf(func(_ js.Value, args []js.Value) any {
		req, signal, err := h.parseArgs(args)
		if err != nil {
			return h.promise.Call("reject", h.typeError.New("geecache: "+err.Error()))
		}
		var resolve, reject js.Value
		executor := js.FuncOf(func(_ js.Value, a []js.Value) any {
			resolve, reject = a[0], a[1]
			return nil
		})
		p := h.promise.New(executor) // calls executor before it returns
		executor.Release()
		// The goroutine runs before control goes back to JavaScript, so a
		// request answered from memory is answered within this call; a
		// load that waits (on a peer's fetch, a timer) lets the event
		// loop go on.
		go h.answer(srv, req, signal, resolve, reject)
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

// answer serves req and settles the Promise.
func (h *host) answer(srv *protocol.Server, req protocol.Request, signal, resolve, reject js.Value) {
	defer func() {
		if r := recover(); r != nil {
			reject.Invoke(h.errorCtor.New(fmt.Sprintf("geecache: serve panicked: %v", r)))
		}
	}()
	ctx := newSignalContext(signal)
	defer ctx.release()
	resolve.Invoke(h.toJS(srv.Serve(ctx, req)))
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
func (h *host) toJS(r protocol.Response) js.Value {
	hdr := h.object.New()
	for k, vs := range r.Header {
		hdr.Set(k, strings.Join(vs, ", "))
	}
	hdr.Set("Content-Length", strconv.Itoa(r.Len()))
	body := h.uint8Array.New(r.Len())
	_, _ = r.WriteTo(jsWriter{body}) // a cached value is copied once, straight into JS memory
	out := h.object.New()
	out.Set("status", r.Status)
	out.Set("headers", hdr)
	out.Set("body", body)
	return out
}

// jsWriter copies what is written to it into a JS Uint8Array, from its
// start: Response.WriteTo writes a body in one call.
type jsWriter struct{ dst js.Value }

func (w jsWriter) Write(p []byte) (int, error) { return js.CopyBytesToJS(w.dst, p), nil }
