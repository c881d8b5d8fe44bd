package nethttp

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/geecache/geecache/adapters/protocol"
)

// NormalizeURL checks a node's base URL and returns it in the one form
// every node must agree on, since the ring places nodes by these strings:
// scheme and host in lower case, no default port (80 for http, 443 for
// https), no trailing "/". It refuses, with an error wrapping
// protocol.ErrConfig, a URL without an http or https scheme or a host, and
// one with a user, a query or a fragment.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("geecache: %w: peer URL %q: %w", protocol.ErrConfig, raw, err)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("geecache: %w: peer URL %q needs an http:// or https:// scheme", protocol.ErrConfig, raw)
	case u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("geecache: %w: peer URL %q has no host", protocol.ErrConfig, raw)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("geecache: %w: peer URL %q must have no user, query or fragment", protocol.ErrConfig, raw)
	}
	host := strings.ToLower(u.Host)
	if h, port, err := net.SplitHostPort(host); err == nil {
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") || port == "" {
			host = h
			if strings.Contains(h, ":") {
				host = "[" + h + "]"
			}
		}
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/"), nil
}
