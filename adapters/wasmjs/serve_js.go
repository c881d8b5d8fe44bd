//go:build js && wasm

package wasmjs

import (
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall/js"

	"github.com/geecache/geecache/adapters/internal/hostserve"
	"github.com/geecache/geecache/adapters/internal/protocol"
	"github.com/geecache/geecache/adapters/nethttp"
)

// Func returns the JavaScript function that answers protocol requests
// with p (see the package documentation for its arguments and result):
// the node's nethttp.Pool, which holds the settings the node serves with
// (the nethttp.Cluster every node shares, in PoolOptions.Cluster), given
// there once. Give it to the host, for example with
//
//	js.Global().Set("geecacheServe", wasmjs.Func(pool))
//
// and call its Release method when the host no longer calls it: the
// goroutine the function keeps between batches (see serve(batch, ...))
// ends once the released function is garbage collected. p must not be
// nil.
//
// The Pool answers as its ServeHTTP does in the other builds, without
// net/http: under GOOS=js a node links no net/http at all (a third of the
// size of its binary), serves through this package and fetches with the
// host's fetch().
func Func(p *nethttp.Pool) js.Func {
	if p == nil {
		panic("geecache/wasmjs: Func(nil)")
	}
	h, ok := hostserve.Of(p)
	if !ok {
		panic("geecache/wasmjs: Func: a Pool not made by nethttp.NewPool")
	}
	f := &served{h: newHost(), hd: h}
	// Release drops the function's Go side, whose one reference is the
	// closure below: once that is collected, nothing can call the function
	// again, and the worker kept for its next batch is stopped.
	runtime.AddCleanup(f, (*host).stop, f.h)
	return js.FuncOf(func(_ js.Value, args []js.Value) any { return f.h.serve(f.hd, args) })
}

// served is what a Func's closure holds, and nothing else does: its
// collection tells that the function was released.
type served struct {
	h  *host
	hd hostserve.Handler
}

// host holds the JavaScript built-ins a Func uses, looked up once: each
// lookup is a call out of wasm.
type host struct {
	promise, uint8Array, array, typeError, errorCtor js.Value
	entries, fromEntries, parse                      js.Value

	idle    chan *batchRun // to the worker waiting for a batch (serveBatch)
	waiting atomic.Bool    // a worker waits on idle, or is about to
	done    chan struct{}  // closed by stop: the function was released
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
		idle:        make(chan *batchRun),
		done:        make(chan struct{}),
	}
}

// stop ends the worker waiting for the next batch, if any, and any that
// would wait after: it is called once the function was released (and
// collected), when no batch can come any more.
func (h *host) stop() { close(h.done) }

// A pending is one request being answered. Its goroutine settles it: with
// the answer (done), or, once the host has been handed a Promise
// (async), by resolving or rejecting that Promise.
type pending struct {
	mu              sync.Mutex
	done, async     bool
	answer          *recorder // once done, unless it panicked
	panicked        string    // what it panicked with
	resolve, reject js.Value  // the Promise's, once async
}

// maxYields bounds the yields of yield: a few, since the scheduler may
// resume the caller before the new goroutine (it takes from the global run
// queue first now and then), but a request that waits on a load stays
// pending however often one yields.
const maxYields = 4

// yield lets c's goroutine run until it is done or waits, so that a request
// answered from memory is answered within the call.
func (c *pending) yield() {
	for range maxYields {
		runtime.Gosched()
		c.mu.Lock()
		done := c.done
		c.mu.Unlock()
		if done {
			return
		}
	}
}

// start answers req in a goroutine of its own.
func start(h *host, hd hostserve.Handler, req request) *pending {
	c := &pending{}
	go c.run(h, hd, req)
	return c
}

// serve answers one call of the function, serve(method, path, headers[,
// signal[, body]]), or of serve(batch, signals[, bodies]) (serveBatch).
// The request is answered by a goroutine, so that a load that waits on
// JavaScript (a peer's fetch, a timer) cannot deadlock the host's event
// loop; this one yields to it once, and a request answered from memory is
// answered then: the answer goes back as it is, with no Promise to make
// (each one costs calls between Go and JavaScript, and a Go callback for
// its executor). Only an answer still pending after the yield comes as a
// Promise.
func (h *host) serve(hd hostserve.Handler, args []js.Value) any {
	if text, ok := h.batchText(args); ok {
		return h.serveBatch(hd, text, args)
	}
	req, err := h.parseArgs(args)
	if err != nil {
		return h.rejected(err)
	}
	c := start(h, hd, req)
	c.yield()
	return h.settle(c)
}

// rejected returns a Promise rejected with a TypeError for err.
func (h *host) rejected(err error) js.Value {
	return h.promise.Call("reject", h.typeError.New("geecache: "+err.Error()))
}

// settle returns c's answer (toJS) if c is done, else a Promise of it,
// settled when it is.
func (h *host) settle(c *pending) js.Value {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		if c.answer == nil {
			return h.promise.Call("reject", h.panicError(c.panicked))
		}
		return h.toJS(c.answer)
	}
	c.async = true
	executor := js.FuncOf(func(_ js.Value, a []js.Value) any {
		c.resolve, c.reject = a[0], a[1]
		return nil
	})
	p := h.promise.New(executor) // calls executor before it returns
	executor.Release()
	return p
}

func (h *host) panicError(msg string) js.Value {
	return h.errorCtor.New("geecache: serve panicked: " + msg)
}

// run answers req with hd and settles c.
func (c *pending) run(h *host, hd hostserve.Handler, req request) {
	a, panicked := h.answer(hd, req)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.async:
		c.done, c.answer, c.panicked = true, a, panicked
	case a == nil:
		c.reject.Invoke(h.panicError(panicked))
	default:
		c.resolve.Invoke(h.toJS(a))
	}
}

// request is what the host passed.
type request struct {
	method, path string
	header       protocol.Header
	signal       js.Value // an AbortSignal, or undefined
	signals      js.Value // in a batch: the array whose index-th is the signal, or undefined
	index        int
	body         []byte
}

// answer serves req with hd and returns the answer, or what the handler
// panicked with.
func (h *host) answer(hd hostserve.Handler, req request) (a *recorder, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			a, panicked = nil, fmt.Sprint(r)
		}
	}()
	ctx := newSignalContext(req.signal, req.signals, req.index)
	defer ctx.release()
	// The path is unescaped, not resolved, and given to the handler in
	// the escaped form net/http's URL.EscapedPath gives a server (so as a
	// node served by net/http sees it): as it came, unless it holds a byte
	// a path may not, and dot segments are left alone.
	var path string
	if p, err := url.PathUnescape(req.path); err == nil && strings.HasPrefix(req.path, "/") {
		path = (&url.URL{Path: p, RawPath: req.path}).EscapedPath()
	} // else "": the handler refuses it (400)
	resp := hd.Serve(ctx, req.method, path, req.header, req.body)
	w := &recorder{header: resp.Header, status: resp.Status}
	_, _ = resp.WriteTo(w)
	return w, ""
}

// parseArgs reads (method, path, headers[, signal[, body]]).
func (h *host) parseArgs(args []js.Value) (request, error) {
	req := request{signal: js.Undefined(), signals: js.Undefined()}
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

// header converts the request's headers into a protocol.Header: node's
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
func (h *host) header(v js.Value) (protocol.Header, error) {
	hdr := make(protocol.Header, 4)
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
func rawHeader(hdr protocol.Header, text string) (protocol.Header, error) {
	if text == "" {
		return hdr, nil
	}
	// The values share one array (a header's first value is a slice of
	// it, its capacity one: a second value of the name is appended apart).
	vals := make([]string, 0, (strings.Count(text, "\n")+1)/2)
	for {
		name, rest, ok := strings.Cut(text, "\n")
		if !ok || name == "" {
			return nil, fmt.Errorf("serve: raw headers: a name without a value, or an empty name (%q)", name)
		}
		value, next, more := strings.Cut(rest, "\n")
		key := protocol.CanonicalKey(name)
		if vs, ok := hdr[key]; ok {
			hdr[key] = append(vs, value)
		} else if len(vals) < cap(vals) {
			vals = append(vals, value)
			hdr[key] = vals[len(vals)-1 : len(vals) : len(vals)]
		} else {
			hdr[key] = []string{value}
		}
		if !more {
			return hdr, nil
		}
		text = next
	}
}
