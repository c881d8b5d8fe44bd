package protocol

import (
	"errors"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"

	"github.com/geecache/geecache/internal/keytest"
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

// whatwgDotSegment reports whether the WHATWG URL standard (fetch, URL and
// Request in browsers, node, Deno, Bun, workerd) takes seg for "." or ".."
// and resolves it away: "." and "..", with any of their dots written as
// "%2e" in either case.
func whatwgDotSegment(seg string) bool {
	switch strings.ToLower(seg) {
	case ".", "%2e", "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// noDotSegments fails t if a segment of the escaped path p, after the
// prefix, is a WHATWG dot segment: a fetch() of it would ask for another
// key, or for no key at all.
func noDotSegments(t *testing.T, p string) {
	t.Helper()
	for seg := range strings.SplitSeq(strings.TrimPrefix(p, Prefix), "/") {
		if whatwgDotSegment(seg) {
			t.Fatalf("%q has the segment %q, which a WHATWG URL parser resolves away", p, seg)
		}
	}
}

// No group or key, "." and ".." included, is escaped into a segment that a
// WHATWG URL parser resolves away, and every one round-trips.
func TestPathHasNoDotSegments(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 1))
	keys := append([]string{".", "..", "...", "!", "!.", "!..", "%2E", ".%2E"}, awkwardKeys...)
	for range 2000 {
		keys = append(keys, keytest.Random(r))
	}
	for _, group := range []string{"scores", ".", "..", "!."} {
		for _, key := range keys {
			p := Path(group, key)
			noDotSegments(t, p)
			if g, k, err := ParsePath(p); err != nil || g != group || k != key {
				t.Fatalf("ParsePath(Path(%q, %q) = %q) = %q, %q, %v", group, key, p, g, k, err)
			}
		}
	}
}

// The dot keys as clients before the "!" form sent them, and as sloppy
// clients may: still read as "." and "..". A "!" that is not the whole
// marker form is an ordinary character, as it always was.
func TestParsePathOtherForms(t *testing.T) {
	for p, want := range map[string]string{
		"/_geecache/scores/%2E":    ".",
		"/_geecache/scores/%2e":    ".",
		"/_geecache/scores/%2E%2E": "..",
		"/_geecache/scores/.%2e":   "..",
		"/_geecache/scores/!./":    ".",
		"/_geecache/scores/!../":   "..",
		"/_geecache/scores/!.":     ".",
		"/_geecache/scores/!..":    "..",
		"/_geecache/scores/.":      ".",
		"/_geecache/scores/%21.":   "!.",
		"/_geecache/scores/%21..":  "!..",
		"/_geecache/scores/!":      "!",
		"/_geecache/scores/!...":   "!...",
		"/_geecache/scores/!x":     "!x",
		"/_geecache/scores/a!.":    "a!.",
	} {
		if g, k, err := ParsePath(p); err != nil || g != "scores" || k != want {
			t.Errorf("ParsePath(%q) = %q, %q, %v; want scores, %q", p, g, k, err, want)
		}
	}
	if g, k, err := ParsePath("/_geecache/!./k"); err != nil || g != "." || k != "k" {
		t.Errorf("ParsePath(/_geecache/!./k) = %q, %q, %v; want group \".\"", g, k, err)
	}
	// Only the dot keys may end in "/".
	for _, p := range []string{"/_geecache/scores/!.../", "/_geecache/scores/%21./", "/_geecache/scores/!./x", "/_geecache/scores/!.//"} {
		if g, k, err := ParsePath(p); !errors.Is(err, ErrBadPath) {
			t.Errorf("ParsePath(%q) = %q, %q, %v; want ErrBadPath", p, g, k, err)
		}
	}
}

// A server older than the "!" form split the path at the group's "/" and
// refused a key that still held a "/": so it refuses the dot keys' paths
// (the client loads the key itself) instead of serving the keys "!." and
// "!..". This is that rule, applied to what Path writes today.
func TestDotKeysRefusedByOlderServers(t *testing.T) {
	for _, key := range []string{".", ".."} {
		_, ek, _ := strings.Cut(strings.TrimPrefix(Path("scores", key), Prefix), "/")
		if !strings.Contains(ek, "/") {
			t.Errorf("Path(scores, %q) = %q: an older server would serve the key %q", key, Path("scores", key), ek)
		}
	}
}
