//go:build js

package protocol

// Header holds a request's or an answer's header fields, keyed by their
// canonical names: under GOOS=js a map of the same shape and methods as
// net/http's Header, which the other builds use (header_other.go), so that
// a js/wasm node need not link net/http.
type Header map[string][]string

// Get returns the first value of key, or "".
func (h Header) Get(key string) string {
	if v := h[CanonicalKey(key)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Values returns the values of key.
func (h Header) Values(key string) []string { return h[CanonicalKey(key)] }

// Set makes value the one value of key.
func (h Header) Set(key, value string) { h[CanonicalKey(key)] = []string{value} }

// Add appends value to the values of key.
func (h Header) Add(key, value string) {
	key = CanonicalKey(key)
	h[key] = append(h[key], value)
}

// Del removes key.
func (h Header) Del(key string) { delete(h, CanonicalKey(key)) }

// Clone returns a copy of h, or nil if h is nil.
func (h Header) Clone() Header {
	if h == nil {
		return nil
	}
	c := make(Header, len(h))
	for k, v := range h {
		c[k] = append([]string(nil), v...)
	}
	return c
}

// statusText is HTTP's reason phrase for code, for the statuses a peer
// answers with ("" for another, as net/http's StatusText).
func statusText(code int) string {
	switch code {
	case statusOK:
		return "OK"
	case statusBadRequest:
		return "Bad Request"
	case statusUnauthorized:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case statusNotFound:
		return "Not Found"
	case statusMethodNotAllowed:
		return "Method Not Allowed"
	case statusRequestEntityTooLarge:
		return "Request Entity Too Large"
	case statusInternalServerError:
		return "Internal Server Error"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 504:
		return "Gateway Timeout"
	}
	return ""
}
