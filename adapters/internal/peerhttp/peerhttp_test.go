package peerhttp

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/geecache/geecache/cache"
)

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8001":                     "http://h:8001",
		"http://h:8001/":                    "http://h:8001",
		"HTTP://H:8001//":                   "http://h:8001",
		"http://h:80/":                      "http://h",
		"https://Abc.lambda-url.on.aws:443": "https://abc.lambda-url.on.aws",
		"https://h:8443/base/":              "https://h:8443/base",
		"http://[::1]:80":                   "http://[::1]",
		" http://h:1 ":                      "http://h:1",
	} {
		if got, err := NormalizeURL(in); err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"localhost:8001", "h:8001", "ftp://h", "http://", "http://h?x=1", "http://h#f",
		"http://u:p@h", "//h:1", "", "http://h?"} {
		if got, err := NormalizeURL(bad); !errors.Is(err, cache.ErrConfig) {
			t.Errorf("NormalizeURL(%q) = %q, %v; want ErrConfig", bad, got, err)
		}
	}
}

// refHost is the reference spelling of a host, with package net:
// net.SplitHostPort, and the default port dropped.
func refHost(scheme, host string) string {
	host = strings.ToLower(host)
	if h, port, err := net.SplitHostPort(host); err == nil {
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") || port == "" {
			host = h
			if strings.Contains(h, ":") {
				host = "[" + h + "]"
			}
		}
	}
	return host
}

// urlHosts are hosts in every form a peer list may spell them.
var urlHosts = []string{"h", "H", "h:", "h:80", "h:443", "h:8001", "H:080", "[::1]", "[::1]:80", "[::1]:", "[::1]:8443",
	"[fe80::1%25en0]:80", "[fe80::1%25en0]", "10.0.0.1:80", "10.0.0.1", "xn--bcher-kva.example:443", "a.b.c:0"}

// NormalizeURL spells every host as refHost does, without package net.
func TestNormalizeURLHostLikeSplitHostPort(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		for _, h := range urlHosts {
			checkHostLikeSplitHostPort(t, scheme+"://"+h+"/p/")
		}
	}
}

func checkHostLikeSplitHostPort(t *testing.T, raw string) {
	t.Helper()
	got, err := NormalizeURL(raw)
	if err != nil {
		return // refused: the parse comes first
	}
	u, _ := url.Parse(strings.TrimSpace(raw))
	scheme := strings.ToLower(u.Scheme)
	want := scheme + "://" + refHost(scheme, u.Host) + strings.TrimRight(u.EscapedPath(), "/")
	if got != want {
		t.Errorf("NormalizeURL(%q) = %q; with net.SplitHostPort: %q", raw, got, want)
	}
}

func FuzzNormalizeURLHost(f *testing.F) {
	for _, h := range urlHosts {
		f.Add("http://" + h)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkHostLikeSplitHostPort(t, raw) })
}

// A peer list is configuration, and its errors go to logs: a URL with a
// password in it is refused without the password in the error.
func TestNormalizeURLErrorsHideThePassword(t *testing.T) {
	for _, bad := range []string{
		"http://u:s3cret@h:8001",     // a user part is refused
		"http://u:s3cret@h:8001/?q",  // so are a query
		"ftp://u:s3cret@h",           // and another scheme
		"http://u:s3cret@h:port",     // that does not parse
		"http://u:s3cret@h:1/%zz",    // a bad escape
		"http://u:s3cret@h\x7f:1",    // a control byte
		" http://u:s3c@ret@h:1 x",    // an "@" in the password
		"http://u:s3cret@[::1:1/a@b", // a bracket out of place
	} {
		_, err := NormalizeURL(bad)
		if !errors.Is(err, cache.ErrConfig) {
			t.Errorf("NormalizeURL(%q) = %v; want ErrConfig", bad, err)
			continue
		}
		if strings.Contains(err.Error(), "s3c") || strings.Contains(err.Error(), "ret@") {
			t.Errorf("NormalizeURL(%q)'s error shows the password: %v", bad, err)
		}
		if !strings.Contains(err.Error(), "u:xxxxx@") {
			t.Errorf("NormalizeURL(%q)'s error does not name the URL it refused: %v", bad, err)
		}
	}
}
