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
// node's base path: Prefix + Escape(group) + "/" + Escape(key).
// Any key round-trips through Path and ParsePath, including keys with "/",
// "%", "?", "#", spaces, non-ASCII text, the dot segments "." and "..", and
// the empty key.
func Path(group, key string) string {
	g, k := Escape(group), Escape(key)
	var b strings.Builder
	b.Grow(len(Prefix) + len(g) + 1 + len(k))
	b.WriteString(Prefix)
	b.WriteString(g)
	b.WriteByte('/')
	b.WriteString(k)
	return b.String()
}

// Escape escapes s as one path segment: url.PathEscape, and the dot
// segments "." and ".." written "%2E" and "%2E%2E", so that no router that
// cleans paths (http.ServeMux does) takes them for "this" or "parent"
// directory and redirects the request.
func Escape(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

// ParsePath splits an escaped path built by Path into its group and key.
// It must be given the escaped form (url.URL.EscapedPath, never the decoded
// url.URL.Path), so that a "/" inside a key, sent as "%2F", is not taken for
// a separator. The group must not be empty; the key may be.
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
	if strings.Contains(ek, "/") {
		return "", "", fmt.Errorf("%w: unescaped \"/\" in key of %s", ErrBadPath, clip(escaped))
	}
	if group, err = url.PathUnescape(eg); err != nil {
		return "", "", fmt.Errorf("%w: group: %w", ErrBadPath, err)
	}
	if key, err = url.PathUnescape(ek); err != nil {
		return "", "", fmt.Errorf("%w: key: %w", ErrBadPath, err)
	}
	return group, key, nil
}
