//go:build !js

package nethttp

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// ServeHTTP answers a protocol request. The path is taken in its escaped
// form (URL.EscapedPath), so a key containing "/" (sent as "%2F") is one
// key; the base path, if any, is removed first. The load runs with the
// request's context, so it is abandoned when the caller goes away.
//
// Only a PUT (a peer's Set) and a POST (a peer's batch) have a body, read
// up to the size limit (for a batch, 1 MiB of keys): any
// other request that comes with a body, or a PUT whose body is over the
// limit, is refused (400 or 413) without the body being read, and the
// connection is closed right after the answer (refusedLinger), not kept
// open for the rest of the body.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if cors(h.origins, w, r) {
		return
	}
	req, resp, ok := h.admit(r.Context(), protocol.Request{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header}, r.ContentLength,
		func(limit int64) ([]byte, error) {
			if wb, ok := r.Body.(protocol.WholeBody); ok {
				return wb.TakeBody(), nil // arrived whole (a multiplexed frame): not copied again
			}
			return io.ReadAll(io.LimitReader(r.Body, limit+1))
		})
	if !ok {
		refuse(w, resp)
		return
	}
	if (r.Method == http.MethodGet || r.Method == http.MethodPost) && protocol.Field(r.Header, protocol.HeaderPeer) != "" && r.ProtoAtLeast(1, 1) {
		// A 102 may be written (with w's header) while the answer is
		// made: the answer's fields go into a map of their own, and into
		// w's once no 102 can be.
		pr := &processing{w: w}
		hdr := h.headers.Get().(http.Header)
		resp := h.srv.ServeInto(r.Context(), req, hdr, pr)
		pr.end()
		write(w, resp)
		clear(hdr)
		h.headers.Put(hdr)
		return
	}
	send(w, h.srv.ServeInto(r.Context(), req, w.Header(), nil))
}

// processingAfter is how long a load runs before the node says it is
// loading: a load that ends sooner (a source that answers from memory)
// costs no interim response, which would be one more write for this node
// and one more header block for the caller to parse. It is far below the
// asking node's hedge delay (PeerPolicy.HedgeMin, 10 ms by default), so
// a node that is loading still says so in time.
const processingAfter = time.Millisecond

// processingEvery is how often a node repeats its 102 while the load
// runs: well within the asking node's PeerPolicy.HedgeMax (1 s by
// default), the silence after which it loads the key itself.
const processingEvery = 100 * time.Millisecond

// processing sends a peer "102 Processing" when the group has to load the
// key it asked for and the load has taken processingAfter, and again every
// processingEvery while it runs, never after the answer has begun: the
// asking node then knows that this node is alive and loading, and waits
// for it instead of loading the key itself (see cache.PeerPolicy).
type processing struct {
	mu    sync.Mutex
	w     http.ResponseWriter
	timer *time.Timer // armed by the first Loading
	done  bool
}

// Loading is called when the group begins a load: it arms the timer that
// sends the 102.
func (p *processing) Loading() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer == nil && !p.done {
		p.timer = time.AfterFunc(processingAfter, p.send)
	}
}

func (p *processing) send() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.w.WriteHeader(http.StatusProcessing) // net/http writes and flushes a 1xx at once
		p.timer.Reset(processingEvery)
	}
}

// end stops p: the answer follows. A load that outlives the request may
// still call Loading; it does nothing then.
func (p *processing) end() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.done = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
}

// refusedLinger is how long a connection whose request was refused stays
// open after the refusal, reading (and dropping) what the caller still
// sends, so that the caller gets the answer before the connection closes
// (closing with unread data sends a reset, which may discard it; net/http
// waits as long before it closes such a connection).
const refusedLinger = 500 * time.Millisecond

// refuse sends resp, the refusal of a request whose body has not been
// read, and has the connection closed right after it. Without the read
// deadline, net/http would read the rest of the body (up to 256 KiB) to
// keep the connection, and hold it until ReadTimeout if the caller never
// sends it.
func refuse(w http.ResponseWriter, resp protocol.Response) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(refusedLinger)) // not every ResponseWriter can
	write(w, resp)
}

// write sends a protocol response as it is.
func write(w http.ResponseWriter, resp protocol.Response) {
	hdr := w.Header()
	for k, v := range resp.Header {
		hdr[k] = v
	}
	send(w, resp)
}

// send sends a protocol response whose header fields are in w's header.
func send(w http.ResponseWriter, resp protocol.Response) {
	w.Header()["Content-Length"] = []string{strconv.Itoa(resp.Len())}
	w.WriteHeader(resp.Status)
	_, _ = resp.WriteTo(w) // a cached value without a copy; on error the caller has gone
}

// cors answers a browser's CORS preflight for an allowed origin and adds
// the CORS headers to the answer of an allowed origin's request. It
// reports whether the request has been answered (a preflight).
func cors(allowed []string, w http.ResponseWriter, r *http.Request) bool {
	if len(allowed) == 0 {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	if corsHeaders(allowed, origin, r.Method, r.Header.Get("Access-Control-Request-Method"), w.Header()) {
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}
