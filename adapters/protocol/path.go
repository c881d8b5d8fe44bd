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
var ErrBadPath = errors.New("geecache/protocol: malformed path")

// Path returns the escaped request path for key in group, relative to the
// node's base path: Prefix + url.PathEscape(group) + "/" + url.PathEscape(key).
// Any key round-trips through Path and ParsePath, including keys with "/",
// "%", "?", "#", spaces, non-ASCII text and the empty key.
func Path(group, key string) string {
	g, k := url.PathEscape(group), url.PathEscape(key)
	var b strings.Builder
	b.Grow(len(Prefix) + len(g) + 1 + len(k))
	b.WriteString(Prefix)
	b.WriteString(g)
	b.WriteByte('/')
	b.WriteString(k)
	return b.String()
}

// ParsePath splits an escaped path built by Path into its group and key.
// It must be given the escaped form (url.URL.EscapedPath, never the decoded
// url.URL.Path), so that a "/" inside a key, sent as "%2F", is not taken for
// a separator. The group must not be empty; the key may be.
func ParsePath(escaped string) (group, key string, err error) {
	rest, ok := strings.CutPrefix(escaped, Prefix)
	if !ok {
		return "", "", fmt.Errorf("%w: %q does not start with %q", ErrBadPath, escaped, Prefix)
	}
	eg, ek, ok := strings.Cut(rest, "/")
	if !ok {
		return "", "", fmt.Errorf("%w: %q has no key segment", ErrBadPath, escaped)
	}
	if eg == "" {
		return "", "", fmt.Errorf("%w: empty group in %q", ErrBadPath, escaped)
	}
	if strings.Contains(ek, "/") {
		return "", "", fmt.Errorf("%w: unescaped \"/\" in key of %q", ErrBadPath, escaped)
	}
	if group, err = url.PathUnescape(eg); err != nil {
		return "", "", fmt.Errorf("%w: group: %w", ErrBadPath, err)
	}
	if key, err = url.PathUnescape(ek); err != nil {
		return "", "", fmt.Errorf("%w: key: %w", ErrBadPath, err)
	}
	return group, key, nil
}
