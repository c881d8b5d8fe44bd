//go:build js && wasm

package wasmjs

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"syscall/js"
	"unsafe"

	"github.com/geecache/geecache/adapters/internal/hostserve"
	"github.com/geecache/geecache/adapters/internal/protocol"
)

// batchText tells serve(batch, signals[, bodies]) from serve(method,
// path, headers[, signal[, body]]): a batch is one string of requests (so
// it holds a newline), then an array or nothing where a path would be.
// It returns the batch.
func (h *host) batchText(args []js.Value) (string, bool) {
	if len(args) == 0 || len(args) > 3 || args[0].Type() != js.TypeString {
		return "", false
	}
	if len(args) > 1 && (args[1].Type() == js.TypeString || !args[1].IsUndefined() && !args[1].IsNull() && !args[1].InstanceOf(h.array)) {
		return "", false // a path (a string), or anything else: serve's to refuse
	}
	text := args[0].String()
	return text, strings.Contains(text, "\n")
}

// serveBatch answers serve(batch, signals[, bodies]): the requests a host
// has gathered (from one turn of its event loop, say), in one call, which
// is what a call between JavaScript and Go costs most for. batch holds
// the requests, separated by NUL ("\x00"); each is its method, path and
// headers (names and values in turn, as node's rawHeaders), each on a
// line of its own. signals[i], if any, is the AbortSignal of request i,
// and bodies[i] the body (a Uint8Array) of a PUT or a POST (a peer's batch). It returns an array
// whose element i is request i's answer, or a Promise of it for a request
// that has to wait (or a rejected one, for a request that is malformed).
// The answers that are ready come in one JSON text, and every request is
// answered by a goroutine of its own, as with serve.
func (h *host) serveBatch(hd hostserve.Handler, text string, args []js.Value) any {
	signals, bodies := js.Undefined(), js.Undefined()
	if len(args) > 1 && args[1].Type() == js.TypeObject {
		signals = args[1]
	}
	if len(args) > 2 && args[2].Type() == js.TypeObject {
		bodies = args[2]
	}
	n := strings.Count(text, "\x00") + 1
	calls, reqs := make([]*pending, 0, n), make([]request, 0, n)
	bad := make([]error, 0, n) // per request: why it is malformed, or nil
	i := 0
	for part := range strings.SplitSeq(text, "\x00") {
		req, err := h.parseBatched(part, signals, bodies, i)
		var c *pending
		if err == nil {
			c = &pending{}
		}
		calls, reqs, bad = append(calls, c), append(reqs, req), append(bad, err)
		i++
	}
	// The requests are answered in turn by a goroutine, which runs now;
	// if it has to wait on one, the next goroutine takes the rest, and so
	// on: a goroutine per request that waits, not per request.
	run := &batchRun{calls: calls, hd: hd, reqs: reqs}
	for run.left() {
		h.dispatch(run)
		runtime.Gosched()
	}

	// One JSON array of the answers that are ready; 0 stands for the rest,
	// set afterwards.
	b := append(make([]byte, 0, 256*len(calls)), '[')
	var later []int // indexes set after the parse
	var binary []int
	for i, c := range calls {
		if i > 0 {
			b = append(b, ',')
		}
		if c == nil {
			b, later = append(b, '0'), append(later, i)
			continue
		}
		c.mu.Lock()
		if c.done && c.answer != nil {
			var text bool
			if b, text = appendAnswer(b, c.answer); !text {
				binary = append(binary, i)
			}
		} else {
			b, later = append(b, '0'), append(later, i)
		}
		c.mu.Unlock()
	}
	b = append(b, ']')
	out := h.parse.Invoke(unsafe.String(unsafe.SliceData(b), len(b))) // b is not used again
	for _, i := range binary {
		h.setBody(out.Index(i), calls[i].answer)
	}
	for _, i := range later {
		if calls[i] == nil {
			out.SetIndex(i, h.rejected(bad[i]))
			continue
		}
		out.SetIndex(i, h.settle(calls[i]))
	}
	return out
}

// parseBatched reads request i of a batch.
func (h *host) parseBatched(part string, signals, bodies js.Value, i int) (request, error) {
	req := request{signal: js.Undefined(), signals: signals, index: i}
	method, rest, ok := strings.Cut(part, "\n")
	path, headers, _ := strings.Cut(rest, "\n")
	if !ok || method == "" || path == "" {
		return req, errors.New("serve: a batched request needs a method and a path, each on a line")
	}
	hdr, err := rawHeader(make(protocol.Header, 4), headers)
	if err != nil {
		return req, err
	}
	req.method, req.path, req.header = method, path, hdr
	if (method == "PUT" || method == "POST") && bodies.Type() == js.TypeObject {
		if b := bodies.Index(i); b.Truthy() {
			if !b.InstanceOf(h.uint8Array) {
				return req, errors.New("serve: body must be a Uint8Array")
			}
			req.body = make([]byte, b.Length())
			js.CopyBytesToGo(req.body, b)
		}
	}
	return req, nil
}

// A batchRun hands the requests of a batch to the goroutines that answer
// them, one at a time, in order.
type batchRun struct {
	hd    hostserve.Handler
	reqs  []request
	mu    sync.Mutex
	next  int
	calls []*pending // nil for a malformed request
}

// dispatch has run's requests answered by a goroutine: the worker that
// answered the last batch, if it is waiting for the next one, else a new
// one. Keeping that one saves a goroutine per batch, and the growth of
// its stack (copied each time it grows) on the way down the handler.
func (h *host) dispatch(run *batchRun) {
	select {
	case h.idle <- run:
	default:
		go h.worker(run)
	}
}

// worker answers run, then, unless another worker already waits, the
// batches dispatched to it after, until the Func is released.
func (h *host) worker(run *batchRun) {
	for run != nil {
		run.work(h)
		if !h.waiting.CompareAndSwap(false, true) {
			return
		}
		run = h.awaitBatch()
	}
}

// awaitBatch waits for the next batch dispatched (the one goroutine a
// Func keeps between calls, as the runtime keeps one for callbacks), or
// returns nil once the Func is released (stop).
func (h *host) awaitBatch() *batchRun {
	select {
	case run := <-h.idle:
		h.waiting.Store(false)
		return run
	case <-h.done:
		return nil
	}
}

// left tells whether a request is still to be taken.
func (b *batchRun) left() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.next < len(b.calls) && b.calls[b.next] == nil {
		b.next++
	}
	return b.next < len(b.calls)
}

// work answers the requests not yet taken, one after another.
func (b *batchRun) work(h *host) {
	for {
		b.mu.Lock()
		for b.next < len(b.calls) && b.calls[b.next] == nil {
			b.next++
		}
		i := b.next
		b.next++
		b.mu.Unlock()
		if i >= len(b.calls) {
			return
		}
		b.calls[i].run(h, b.hd, b.reqs[i])
	}
}
