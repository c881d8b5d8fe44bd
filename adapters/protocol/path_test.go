package protocol

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// awkwardKeys are keys that a sloppy escaping scheme breaks.
var awkwardKeys = []string{
	"", "Tom", "a b", "a/b", "/", "//", "a%2Fb", "%", "%zz", "100%", "a?b=c", "a#frag", "a+b",
	"ключ", "日本語", "emoji 😀", "semi;colon", "comma,", "../..", ".", "..", "tab\tnewline\n",
	"\x00nul", "\xff\xfe invalid UTF-8", "...", "quote\"'", "back\\slash", "a&b=c", "colon:at@", strings.Repeat("x", 1000),
}

func TestPathRoundTrip(t *testing.T) {
	for _, group := range []string{"scores", "a b", "g/h", "日本", "%2F", "?#"} {
		for _, key := range awkwardKeys {
			p := Path(group, key)
			// What a server sees: the path as sent, after net/url parsing.
			u, err := url.Parse("http://127.0.0.1" + p)
			if err != nil {
				t.Fatalf("Path(%q, %q) = %q does not parse as a URL: %v", group, key, p, err)
			}
			if u.RawQuery != "" || u.Fragment != "" {
				t.Fatalf("Path(%q, %q) = %q leaks into query %q or fragment %q", group, key, p, u.RawQuery, u.Fragment)
			}
			if got := u.EscapedPath(); got != p {
				t.Fatalf("EscapedPath of %q = %q; signatures would not match", p, got)
			}
			g, k, err := ParsePath(u.EscapedPath())
			if err != nil || g != group || k != key {
				t.Fatalf("ParsePath(Path(%q, %q)) = %q, %q, %v", group, key, g, k, err)
			}
		}
	}
}

func TestParsePathRejects(t *testing.T) {
	for _, p := range []string{
		"", "/", "/_geecache", "/_geecache/", "/_geecache/scores", "/_geecache//k",
		"/other/scores/k", "_geecache/scores/k", "/_geecache/scores/a/b", "/_geecache/scores/%zz",
		"/_geecache/%/k", "/_geecache/scores/%", "/x/_geecache/scores/k",
	} {
		if g, k, err := ParsePath(p); !errors.Is(err, ErrBadPath) {
			t.Errorf("ParsePath(%q) = %q, %q, %v; want ErrBadPath", p, g, k, err)
		}
	}
}

func TestParsePathEmptyKey(t *testing.T) {
	g, k, err := ParsePath("/_geecache/scores/")
	if err != nil || g != "scores" || k != "" {
		t.Fatalf("ParsePath = %q, %q, %v; want scores, empty key", g, k, err)
	}
}
