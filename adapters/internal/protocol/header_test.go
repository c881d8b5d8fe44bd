package protocol

import (
	"maps"
	"net/http"
	"net/textproto"
	"slices"
	"testing"
)

// headerNames are field names in every spelling the hosts hand a node: a
// Fetch host's lower case, node's rawHeaders as sent, and names no field
// may have.
var headerNames = []string{
	"", "a", "A", "x-geecache-peer", "X-GEECACHE-PEER", "X-Geecache-Peer", "content-length", "traceparent",
	"x--y", "-x", "x-", "x_y-z", "1-a", "a b", "a\tb", "ä-b", "x-geecache-checksum", "WWW-Authenticate", "é",
	"x:y", "\x00", "Accept-Encoding", "accept-ENCODING", "x-geecache-timestamp", "x-geecache-signature",
	"x-geecache-checksum", "content-type", "host", "user-agent", "accept", "accept-encoding", "connection",
	"origin", "traceparent",
}

// CanonicalKey spells a name as net/textproto does (what net/http's
// Header does to a name), so that a js node, which has no net/textproto,
// finds the fields a peer sent under any spelling.
func TestCanonicalKey(t *testing.T) {
	for _, s := range headerNames {
		if got, want := CanonicalKey(s), textproto.CanonicalMIMEHeaderKey(s); got != want {
			t.Errorf("CanonicalKey(%q) = %q; want %q", s, got, want)
		}
	}
	for _, s := range []string{HeaderPeer, "x-geecache-peer", "x-geecache-signature", "host", "user-agent", "content-length", "traceparent"} {
		if n := testing.AllocsPerRun(100, func() { _ = CanonicalKey(s) }); n != 0 {
			t.Errorf("CanonicalKey(%q): %v allocations; want 0", s, n)
		}
	}
}

func FuzzCanonicalKey(f *testing.F) {
	for _, s := range headerNames {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := CanonicalKey(s), textproto.CanonicalMIMEHeaderKey(s); got != want {
			t.Errorf("CanonicalKey(%q) = %q; want %q", s, got, want)
		}
	})
}

// Header behaves as net/http's Header in every build: under GOOS=js it is
// the protocol's own map (header_js.go), which this compares with
// net/http's, operation by operation.
func TestHeaderActsAsNetHTTP(t *testing.T) {
	ours, theirs := Header{}, http.Header{}
	same := func(step string) {
		t.Helper()
		if !maps.EqualFunc(map[string][]string(ours), map[string][]string(theirs), slices.Equal) {
			t.Fatalf("after %s: %v; net/http has %v", step, ours, theirs)
		}
	}
	for i, name := range headerNames {
		v := string(rune('a' + i%26))
		ours.Add(name, v)
		theirs.Add(name, v)
		same("Add " + name)
		if i%3 == 0 {
			ours.Set(name, v+v)
			theirs.Set(name, v+v)
			same("Set " + name)
		}
	}
	for _, name := range headerNames {
		if g, w := ours.Get(name), theirs.Get(name); g != w {
			t.Errorf("Get(%q) = %q; net/http: %q", name, g, w)
		}
		if g, w := ours.Values(name), theirs.Values(name); !slices.Equal(g, w) {
			t.Errorf("Values(%q) = %q; net/http: %q", name, g, w)
		}
	}
	c := ours.Clone()
	c.Add("x-geecache-peer", "more")
	if ours.Get(HeaderPeer) != theirs.Get(HeaderPeer) || len(ours.Values(HeaderPeer)) != len(theirs.Values(HeaderPeer)) {
		t.Errorf("Clone shares its values with the original: %v", ours)
	}
	for _, name := range headerNames[:8] {
		ours.Del(name)
		theirs.Del(name)
		same("Del " + name)
	}
	if Header(nil).Clone() != nil || Header(nil).Get("a") != "" {
		t.Error("a nil Header: Clone or Get")
	}
}

// statusText gives HTTP's phrase for each status the protocol sends, in
// every build (an error a peer sent without a message is named by it).
func TestStatusText(t *testing.T) {
	for _, c := range []int{200, 400, 401, 403, 404, 405, 413, 500, 502, 503, 504, 299} {
		if got, want := statusText(c), http.StatusText(c); got != want {
			t.Errorf("statusText(%d) = %q; want %q", c, got, want)
		}
	}
}
