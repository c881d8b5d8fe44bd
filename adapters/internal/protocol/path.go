package protocol

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Prefix is the fixed first segment of every protocol path, after the base
// path under which a node mounts its handler.
const Prefix = "/_geecache/"

// ErrBadPath is returned by ParsePath for a path that is not
// Prefix + escaped group + "/" + escaped key. A server answers it with 400.
var ErrBadPath = errors.New("malformed path")

// Path returns the escaped request path for key in group, relative to the
// node's base path: Prefix + Escape(group) + "/" + Escape(key), and a
// final "/" after the key "." or ".." (written "!./" and "!../": a server
// older than the "!" form refuses such a path, since its key holds a "/",
// rather than read the key "!." or "!..").
// Any key round-trips through Path and ParsePath, including keys with "/",
// "%", "?", "#", spaces, non-ASCII text, the dot segments "." and "..", and
// the empty key.
func Path(group, key string) string {
	g, k := Escape(group), Escape(key)
	dots := key == "." || key == ".."
	var b strings.Builder
	b.Grow(len(Prefix) + len(g) + 2 + len(k))
	b.WriteString(Prefix)
	b.WriteString(g)
	b.WriteByte('/')
	b.WriteString(k)
	if dots {
		b.WriteByte('/')
	}
	return b.String()
}

// Escape escapes s as one path segment: url.PathEscape, except that the
// dot segments "." and ".." are written "!." and "!..". Left as they are,
// or written "%2E" and "%2E%2E", they are dot segments that routers which
// clean paths (http.ServeMux) and every WHATWG URL parser (fetch() in
// browsers, node.js, Deno, Bun, Workers) remove or resolve, so the request
// would name another key or none. url.PathEscape always escapes "!" (as
// "%21"), so no other segment starts with a bare "!"; and as a sub-delim
// of RFC 3986, "!" and "%21" are not equivalent, so no URL normaliser
// turns one into the other.
func Escape(s string) string {
	switch s {
	case ".", "..":
		return dotMarker + s
	}
	return url.PathEscape(s)
}

// dotMarker starts the escaped form of the segments "." and "..".
const dotMarker = "!"

// unescape reverses Escape for one segment. It also takes every other
// spelling url.PathUnescape decodes, such as "%2E" and "%2E%2E" (the form
// of "." and ".." before the marker), so that older clients are served.
func unescape(seg string) (string, error) {
	switch seg {
	case dotMarker + ".", dotMarker + "..":
		return seg[len(dotMarker):], nil
	}
	return url.PathUnescape(seg)
}

// ParsePath splits an escaped path built by Path into its group and key.
// It must be given the escaped form (url.URL.EscapedPath, never the decoded
// url.URL.Path), so that a "/" inside a key, sent as "%2F", is not taken for
// a separator. The group must not be empty; the key may be. It reads the
// dot keys in every form clients have sent them: "!./" (Path's), "!.",
// "%2E" and "." (and the same for "..").
func ParsePath(escaped string) (group, key string, err error) {
	rest, ok := strings.CutPrefix(escaped, Prefix)
	if !ok {
		return "", "", fmt.Errorf("%w: %s does not start with %q", ErrBadPath, clip(escaped), Prefix)
	}
	eg, ek, ok := strings.Cut(rest, "/")
	if !ok {
		return "", "", fmt.Errorf("%w: %s has no key segment", ErrBadPath, clip(escaped))
	}
	if eg == "" {
		return "", "", fmt.Errorf("%w: empty group in %s", ErrBadPath, clip(escaped))
	}
	if ek == dotMarker+"./" || ek == dotMarker+"../" {
		ek = ek[:len(ek)-1] // the key "." or "..", as Path writes it
	}
	if strings.Contains(ek, "/") {
		return "", "", fmt.Errorf("%w: unescaped \"/\" in key of %s", ErrBadPath, clip(escaped))
	}
	if group, err = unescape(eg); err != nil {
		return "", "", fmt.Errorf("%w: group: %w", ErrBadPath, err)
	}
	if key, err = unescape(ek); err != nil {
		return "", "", fmt.Errorf("%w: key: %w", ErrBadPath, err)
	}
	return group, key, nil
}
