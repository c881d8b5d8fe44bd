//go:build js && wasm

package wasmjs

import (
	"context"
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
	return js.FuncOf(func(_ js.Value, args []js.Value) any {
		req, signal, err := parseArgs(args)
		promise := js.Global().Get("Promise")
		if err != nil {
			return promise.Call("reject", js.Global().Get("TypeError").New("geecache: "+err.Error()))
		}
		var resolve, reject js.Value
		executor := js.FuncOf(func(_ js.Value, a []js.Value) any {
			resolve, reject = a[0], a[1]
			return nil
		})
		p := promise.New(executor) // calls executor before it returns
		executor.Release()
		go answer(srv, req, signal, resolve, reject)
		return p
	})
}

// answer serves req and settles the Promise.
func answer(srv *protocol.Server, req protocol.Request, signal, resolve, reject js.Value) {
	defer func() {
		if r := recover(); r != nil {
			reject.Invoke(js.Global().Get("Error").New(fmt.Sprintf("geecache: serve panicked: %v", r)))
		}
	}()
	ctx, stop := signalContext(signal)
	defer stop()
	resolve.Invoke(toJS(srv.Serve(ctx, req)))
}

// parseArgs reads (method, path, headers[, signal]).
func parseArgs(args []js.Value) (protocol.Request, js.Value, error) {
	signal := js.Undefined()
	if len(args) < 3 {
		return protocol.Request{}, signal, errors.New("serve(method, path, headers[, signal]) needs 3 arguments")
	}
	if args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
		return protocol.Request{}, signal, errors.New("serve: method and path must be strings")
	}
	h, err := header(args[2])
	if err != nil {
		return protocol.Request{}, signal, err
	}
	if len(args) > 3 && args[3].Truthy() {
		signal = args[3]
		if signal.Type() != js.TypeObject || signal.Get("addEventListener").Type() != js.TypeFunction {
			return protocol.Request{}, signal, errors.New("serve: signal must be an AbortSignal")
		}
	}
	return protocol.Request{Method: args[0].String(), Path: args[1].String(), Header: h}, signal, nil
}

// header converts a Headers object, or a plain object of names to strings
// or arrays of strings, into an http.Header.
func header(v js.Value) (http.Header, error) {
	h := http.Header{}
	switch {
	case v.IsUndefined() || v.IsNull():
		return h, nil
	case v.Type() != js.TypeObject:
		return nil, errors.New("serve: headers must be an object")
	case v.Get("entries").Type() == js.TypeFunction: // Headers, Map
		it := v.Call("entries")
		for n := it.Call("next"); !n.Get("done").Bool(); n = it.Call("next") {
			kv := n.Get("value")
			h.Add(kv.Index(0).String(), kv.Index(1).String())
		}
		return h, nil
	}
	keys := js.Global().Get("Object").Call("keys", v)
	for i := range keys.Length() {
		k := keys.Index(i).String()
		switch val := v.Get(k); {
		case val.InstanceOf(js.Global().Get("Array")):
			for j := range val.Length() {
				h.Add(k, val.Index(j).String())
			}
		case val.Type() == js.TypeString:
			h.Add(k, val.String())
		}
	}
	return h, nil
}

// signalContext returns a context that ends when signal (an AbortSignal,
// or undefined) aborts, and the function that releases it.
func signalContext(signal js.Value) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	if signal.IsUndefined() {
		return ctx, cancel
	}
	if signal.Get("aborted").Bool() {
		cancel()
		return ctx, cancel
	}
	onAbort := js.FuncOf(func(js.Value, []js.Value) any {
		cancel()
		return nil
	})
	signal.Call("addEventListener", "abort", onAbort)
	return ctx, func() {
		signal.Call("removeEventListener", "abort", onAbort)
		onAbort.Release()
		cancel()
	}
}

// toJS turns a response into {status, headers, body}.
func toJS(r protocol.Response) js.Value {
	hdr := js.Global().Get("Object").New()
	for k, vs := range r.Header {
		hdr.Set(k, strings.Join(vs, ", "))
	}
	hdr.Set("Content-Length", strconv.Itoa(len(r.Body)))
	body := js.Global().Get("Uint8Array").New(len(r.Body))
	js.CopyBytesToJS(body, r.Body)
	out := js.Global().Get("Object").New()
	out.Set("status", r.Status)
	out.Set("headers", hdr)
	out.Set("body", body)
	return out
}
