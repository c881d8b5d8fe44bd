//go:build !js && !wasip1

package mux

import (
	"errors"
	"net/http"
	"strconv"
)

// A muxResponseWriter sends the handler's answer to one request frame as
// an answer frame; a 1xx goes at once, as an interim frame. A body written
// in one Write of the announced Content-Length (as the handler sends every
// answer) goes straight to the connection, the cached value uncopied.
type muxResponseWriter struct {
	sc     *muxServerConn
	id     uint32
	header http.Header
	status int
	sent   bool
	body   []byte
	// interims is how many 1xx were sent: a peer that did not say it takes
	// more (muxServerConn.interims) is sent the first only.
	interims int
}

func (w *muxResponseWriter) Header() http.Header { return w.header }

func (w *muxResponseWriter) WriteHeader(code int) {
	if w.status != 0 || w.sent {
		return
	}
	if code >= 100 && code < 200 {
		if code != http.StatusSwitchingProtocols && (w.interims == 0 || w.sc.interims) {
			w.interims++
			f := StartFrame(nil, KindInterim, w.id)
			f = append(f, byte(code>>8), byte(code), 0, 0) // status, no fields
			EndHead(f)
			SetLen(f, 0)
			w.sc.lock()
			w.sc.write(f)
			w.sc.unlock()
		}
		return
	}
	w.status = code
}

// head returns the answer frame's header and head, for a body of n bytes;
// ok is false if the handler's fields do not fit a frame, and then the
// frame is a 500 without a body.
func (w *muxResponseWriter) head(n int) (f []byte, ok bool) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	delete(w.header, "Content-Length") // the frame has it
	delete(w.header, "Connection")     // this one stays open
	f = StartFrame(make([]byte, 0, 256), KindAnswer, w.id)
	f = append(f, byte(w.status>>8), byte(w.status))
	f, err := AppendFields(f, w.header)
	ok = err == nil && len(f)-FrameHeader-4 <= muxMaxHead
	if !ok { // no handler of this package writes such fields
		f = StartFrame(f[:0], KindAnswer, w.id)
		f = append(f, byte(http.StatusInternalServerError>>8), byte(http.StatusInternalServerError&0xff), 0, 0)
		n = 0
	}
	EndHead(f)
	SetLen(f, n)
	return f, ok
}

func (w *muxResponseWriter) Write(p []byte) (int, error) {
	if w.sent {
		return 0, errors.New("geecache: body longer than announced")
	}
	if w.body == nil && strconv.Itoa(len(p)) == w.header.Get("Content-Length") {
		f, ok := w.head(len(p))
		w.sc.lock()
		w.sc.write(f)
		if ok {
			w.sc.write(p)
		}
		w.sc.unlock()
		w.sent = true
		return len(p), nil
	}
	if int64(len(w.body)+len(p)) > w.sc.s.maxFrame {
		return 0, errors.New("geecache: answer over the frame limit")
	}
	w.body = append(w.body, p...)
	return len(p), nil
}

// finish sends the answer if Write has not.
func (w *muxResponseWriter) finish() {
	if w.sent {
		return
	}
	w.sent = true
	f, ok := w.head(len(w.body))
	w.sc.lock()
	w.sc.write(f)
	if ok {
		w.sc.write(w.body)
	}
	w.sc.unlock()
}
