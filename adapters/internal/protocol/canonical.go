package protocol

// CanonicalKey returns a header field name in its canonical form, as
// net/textproto's CanonicalMIMEHeaderKey does: the first letter and each
// letter after a "-" upper case, the others lower case ("x-geecache-peer"
// is "X-Geecache-Peer"). A name holding a byte that no field name may hold
// (a space, say) is returned as it is. It allocates only for a name not
// already canonical, nor for the names a peer request carries in lower
// case (a Fetch host's spelling).
func CanonicalKey(s string) string {
	upper, canonical := true, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !tokenByte(c) {
			return s
		}
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			canonical = false
		}
		upper = c == '-'
	}
	if canonical {
		return s
	}
	if c := commonKey(s); c != "" {
		return c
	}
	b := []byte(s)
	upper = true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return string(b)
}

// tokenByte tells whether c may be in a header field name (RFC 9110's
// tchar).
func tokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// commonKey returns the canonical form of s, a name not in canonical form,
// without allocating, for the fields of a peer request (the protocol's and
// those every HTTP client sends), or "".
func commonKey(s string) string {
	switch s {
	case "x-geecache-peer":
		return HeaderPeer
	case "x-geecache-timestamp":
		return HeaderTimestamp
	case "x-geecache-signature":
		return HeaderSignature
	case "x-geecache-checksum":
		return HeaderChecksum
	case "content-length":
		return "Content-Length"
	case "content-type":
		return "Content-Type"
	case "host":
		return "Host"
	case "user-agent":
		return "User-Agent"
	case "accept":
		return "Accept"
	case "accept-encoding":
		return "Accept-Encoding"
	case "connection":
		return "Connection"
	case "origin":
		return "Origin"
	case "traceparent":
		return "Traceparent"
	}
	return ""
}
