// Package peerhttp holds what the bindings that reach peers over HTTP
// (adapters/nethttp, adapters/lambda) must agree on: the one form of a
// node's URL, and the defaults of a peer request. An application meets
// these through the bindings' options and docs, never by name.
package peerhttp

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/geecache/geecache/cache"
)

// Timeout bounds one peer request (connect, send, wait, read) when a
// binding's Timeout option is 0. When it expires the calling node loads
// the key itself.
const Timeout = 10 * time.Second

// MaxIdleConnsPerHost is the keep-alive pool size per peer of the
// bindings' transports. net/http's default of 2 makes a busy node open and
// close a TCP connection for most peer requests; this is sized for a few
// hundred concurrent requests per peer.
const MaxIdleConnsPerHost = 256

// CheckTimeout returns a binding's Timeout option, d, with its default:
// Timeout for 0. It refuses a negative d with an error wrapping
// cache.ErrConfig.
func CheckTimeout(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, fmt.Errorf("geecache: %w: Timeout %v is negative", cache.ErrConfig, d)
	case d == 0:
		return Timeout, nil
	}
	return d, nil
}

// CheckBasePath checks an escaped base path (the BasePath of a binding's
// Cluster): "" or "/…" without a trailing "/", a query or a fragment.
func CheckBasePath(p string) error {
	if p != "" && (p[0] != '/' || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "?#")) {
		return fmt.Errorf("geecache: %w: BasePath %q must start with \"/\" and have no trailing \"/\", query or fragment", cache.ErrConfig, p)
	}
	return nil
}

// CloseIdle closes the idle connections of v, a transport or an HTTP
// client, if it keeps any.
func CloseIdle(v any) {
	if c, ok := v.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// NormalizeURL checks a node's base URL and returns it in the one form
// every node must agree on, since the ring places nodes by these strings:
// scheme and host in lower case, no default port (80 for http, 443 for
// https), no trailing "/". It refuses, with an error wrapping
// cache.ErrConfig, a URL without an http or https scheme or a host, and
// one with a user, a query or a fragment.
//
// Its errors quote the URL with any password in it replaced by "xxxxx":
// a peer list is configuration, and its errors go to logs.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		// url's *Error repeats the whole URL, password and all: keep
		// only what it says is wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("geecache: %w: peer URL %q: %w", cache.ErrConfig, redact(raw), err)
	}
	raw = redact(raw)
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("geecache: %w: peer URL %q needs an http:// or https:// scheme", cache.ErrConfig, raw)
	case u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("geecache: %w: peer URL %q has no host", cache.ErrConfig, raw)
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("geecache: %w: peer URL %q must have no user, query or fragment", cache.ErrConfig, raw)
	}
	return scheme + "://" + normalHost(scheme, u) + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// redact returns raw with the password of its user part, if it has one,
// replaced by "xxxxx", and otherwise as it is (whether it parses or not:
// an error quotes what was given). The authority is
// what follows "//" up to the next "/", "?" or "#", and its user part
// what comes before its last "@".
func redact(raw string) string {
	i := strings.Index(raw, "//")
	if i < 0 {
		return raw
	}
	auth := raw[i+2:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return raw
	}
	user := auth[:at]
	if c := strings.IndexByte(user, ':'); c >= 0 {
		user = user[:c] + ":xxxxx"
	}
	return raw[:i+2] + user + raw[i+2+at:]
}

// normalHost returns u's host in lower case, without its port if that is
// the scheme's default or empty ("h:"), and as it is if it does not split
// into a host and a port: the spelling package net's SplitHostPort gave,
// without package net, which a js/wasm node does not link otherwise
// (TestNormalizeURLHostLikeSplitHostPort, FuzzNormalizeURLHost).
func normalHost(scheme string, u *url.URL) string {
	host := strings.ToLower(u.Host)
	h, port, ok := splitHostPort(host)
	if !ok || (port != "" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443")) {
		return host
	}
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

// splitHostPort splits "host:port", "[host]:port" or "[host]:" at its
// last colon, as net.SplitHostPort does: ok is false for a host with no
// port part, more colons than a bracketed host allows, or a bracket out of
// place.
func splitHostPort(hp string) (host, port string, ok bool) {
	i := strings.LastIndexByte(hp, ':')
	if i < 0 {
		return "", "", false
	}
	j, k := 0, 0 // where brackets may no longer appear: '[' from j, ']' from k
	if strings.HasPrefix(hp, "[") {
		end := strings.IndexByte(hp, ']')
		if end < 0 || end+1 != i {
			return "", "", false
		}
		host, j, k = hp[1:end], 1, end+1
	} else {
		host = hp[:i]
		if strings.IndexByte(host, ':') >= 0 {
			return "", "", false
		}
	}
	if strings.IndexByte(hp[j:], '[') >= 0 || strings.IndexByte(hp[k:], ']') >= 0 {
		return "", "", false
	}
	return host, hp[i+1:], true
}
