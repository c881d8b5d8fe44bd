//go:build js && wasm

package wasmjs

import (
	"strconv"
	"strings"
	"syscall/js"
	"unicode/utf8"
	"unsafe"

	"github.com/geecache/geecache/adapters/internal/protocol"
)

// recorder is an answer as it goes to JavaScript in one piece: the
// protocol's Response, its body written out (without a copy, for a cached
// value).
type recorder struct {
	header protocol.Header
	status int
	body   []byte
}

func (w *recorder) Write(p []byte) (int, error) {
	if w.body == nil {
		w.body = p[:len(p):len(p)] // one Write (a cached value): sent as it is, copied once, into JavaScript
		return len(p), nil
	}
	w.body = append(w.body[:len(w.body):len(w.body)], p...)
	return len(p), nil
}

// toJS turns a response into {status, headers, body}. It is made by
// JSON.parse from one JSON text (one call, where setting each field from
// Go is a call per field and per string, and each object handed to Go
// costs it a finalizer): the status, the headers, and a body that is valid
// UTF-8 as a string (sent as the same bytes, since hosts send a string
// body as UTF-8); any other body is copied into a Uint8Array.
func (h *host) toJS(r *recorder) js.Value {
	b, text := appendAnswer(make([]byte, 0, 192+len(r.body)+len(r.body)/8), r)
	out := h.parse.Invoke(unsafe.String(unsafe.SliceData(b), len(b))) // b is not used again
	if !text {
		h.setBody(out, r)
	}
	return out
}

// setBody sets out.body to a Uint8Array holding r's body.
func (h *host) setBody(out js.Value, r *recorder) {
	body := h.uint8Array.New(len(r.body))
	js.CopyBytesToJS(body, r.body)
	out.Set("body", body)
}

// appendAnswer appends r as JSON, {status, headers[, body]}, to b; text
// says whether the body is in it (valid UTF-8).
func appendAnswer(b []byte, r *recorder) (_ []byte, text bool) {
	text = utf8.Valid(r.body)
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
	return append(b, '}'), text
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
