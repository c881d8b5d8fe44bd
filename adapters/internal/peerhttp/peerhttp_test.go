package peerhttp

import (
	"errors"
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
