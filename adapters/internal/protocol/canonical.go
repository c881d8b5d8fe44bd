package protocol

// CanonicalKey returns a header field name in its canonical form, as
// net/textproto's CanonicalMIMEHeaderKey does: the first letter and each
// letter after a "-" upper case, the others lower case ("x-geecache-peer"
// is "X-Geecache-Peer"). A name holding a byte that no field name may hold
// (a space, say) is returned as it is. It allocates only for a name not
// already canonical.
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
