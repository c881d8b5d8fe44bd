package protocol

import (
	"context"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
)

// docVectors returns the test vectors of PROTOCOL.md: the lines of its
// "```vectors" block, as name: value, with "\n" standing for a newline.
func docVectors(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile("../../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```vectors\n")
	if !ok {
		t.Fatal("PROTOCOL.md has no ```vectors block")
	}
	block, _, _ = strings.Cut(block, "```")
	v := map[string]string{}
	for line := range strings.Lines(block) {
		name, value, ok := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
		if !ok {
			t.Fatalf("vector line %q is not name: value", line)
		}
		v[name] = strings.ReplaceAll(value, `\n`, "\n")
	}
	return v
}

// The code produces exactly the vectors published in PROTOCOL.md.
// In a synctest bubble, whose clock the test moves to the vectors' time.
func TestPublishedVectors(t *testing.T) {
	synctest.Test(t, testPublishedVectors)
}

func testPublishedVectors(t *testing.T) {
	drainBubble(t)
	v := docVectors(t)
	secret := []byte(v["secret"])
	sec, err := strconv.ParseInt(v["time"], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.Unix(sec, 0))) // the bubble's clock starts in 2000
	target, group, key := v["target"], v["group"], v["key"]
	ctx := context.Background()
	check := func(what, got string) {
		t.Helper()
		if want, ok := v[what]; !ok || got != want {
			t.Errorf("%s = %q; PROTOCOL.md says %q", what, got, want)
		}
	}

	c := newClient(t, &ClientOptions{Secret: secret})
	req := c.NewRequest(ctx, target, group, key, false)
	check("path", req.Path)
	for _, h := range []string{HeaderPeer, HeaderTimestamp, HeaderSignature} {
		check("request "+h, req.Header.Get(h))
	}
	check("request canonical", strings.Join([]string{"GEECACHE2", "GET", target, req.Path, "1", v["time"]}, "\n"))
	mac := requestMAC(newMACs(secret), "GET", target, req.Path, "1", v["time"], req.Header)
	check("request X-Geecache-Signature", hex.EncodeToString(mac))

	reg := cache.NewRegistry()
	if _, err := reg.NewGroup(group, 1<<10, getter.Func(func(_ context.Context, k string) ([]byte, error) {
		return []byte(v["value"]), nil
	}), nil); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, reg, &ServerOptions{Secret: secret, Self: target})
	r := s.Serve(ctx, req)
	if r.Status != 200 || bodyOf(r) != v["value"] {
		t.Fatalf("Serve = %d %q; want 200 %q", r.Status, bodyOf(r), v["value"])
	}
	sig := req.Header.Get(HeaderSignature)
	check("value X-Geecache-Checksum", r.Header.Get(HeaderChecksum))
	check("value canonical", strings.Join([]string{"GEECACHE2 response", sig, "200", "", r.Header.Get(HeaderChecksum)}, "\n"))
	check("value X-Geecache-Signature", r.Header.Get(HeaderSignature))
	if got, err := read(ctx, c, req, r, -2); err != nil || string(got) != v["value"] {
		t.Fatalf("the client reads %q, %v; want %q", got, err, v["value"])
	}

	nf := s.Seal(req, ErrorResponse(CodeNotFound, strings.TrimSuffix(v["not_found body"], "\n")))
	check("not_found body", string(nf.Body))
	check("not_found X-Geecache-Checksum", nf.Header.Get(HeaderChecksum))
	check("not_found canonical", strings.Join([]string{"GEECACHE2 response", sig, "404", "not_found", nf.Header.Get(HeaderChecksum)}, "\n"))
	check("not_found X-Geecache-Signature", nf.Header.Get(HeaderSignature))
	check("empty X-Geecache-Checksum without a secret", Checksum(nil))

	// Without a secret: the xxhash64 checksum, no signature.
	plain := newServer(t, reg, nil).Serve(ctx, newClient(t, nil).NewRequest(ctx, target, group, key, false))
	if plain.Header.Get(HeaderChecksum) != v["value X-Geecache-Checksum without a secret"] || plain.Header.Get(HeaderSignature) != "" {
		t.Fatalf("without a secret: headers %v; want the xxhash64 checksum and no signature", plain.Header)
	}

	// A key a WHATWG URL parser would resolve away as "%2E%2E": its marker
	// form, which the signature covers as sent.
	dot := c.NewRequest(ctx, target, group, v["dot key"], false)
	check("dot path", dot.Path)
	check("dot request canonical", strings.Join([]string{"GEECACHE2", "GET", target, dot.Path, "1", v["time"]}, "\n"))
	check("dot request X-Geecache-Signature", dot.Header.Get(HeaderSignature))
	if r := s.Serve(ctx, dot); r.Status != 200 || bodyOf(r) != v["value"] {
		t.Fatalf("the published dot-key request: %d %q; want 200 %q", r.Status, bodyOf(r), v["value"])
	}

	// A memory-only request (a key's new owner asking its previous one):
	// the peer header's value is signed like any other. The value is in
	// the server's memory now; the dot key is not.
	mem := c.NewRequest(ctx, target, group, key, true)
	check("memory request X-Geecache-Peer", mem.Header.Get(HeaderPeer))
	check("memory request canonical", strings.Join([]string{"GEECACHE2", "GET", target, mem.Path, PeerMemoryOnly, v["time"]}, "\n"))
	check("memory request X-Geecache-Signature", mem.Header.Get(HeaderSignature))
	if r := s.Serve(ctx, mem); r.Status != 200 || bodyOf(r) != v["value"] {
		t.Fatalf("the published memory-only request: %d %q; want 200 %q", r.Status, bodyOf(r), v["value"])
	}
	reg.Lookup(group).Remove(ctx, key)
	nh := s.Serve(ctx, c.NewRequest(ctx, target, group, key, true))
	if nh.Status != 404 || nh.Code() != CodeNotHeld {
		t.Fatalf("memory-only request for a key not held: %d %q; want 404 not_held", nh.Status, nh.Code())
	}
	check("not_held body", string(nh.Body))

	// A PUT: its value's checksum and its TTL are signed too.
	ttlMs, _ := strconv.ParseInt(v["put ttl"], 10, 64)
	put := c.NewSetRequest(ctx, target, group, key, []byte(v["put value"]), time.Duration(ttlMs)*time.Millisecond)
	check("put X-Geecache-Checksum", put.Header.Get(HeaderChecksum))
	check("put canonical", strings.Join([]string{"GEECACHE2", "PUT", target, put.Path, "1", v["time"], put.Header.Get(HeaderChecksum), v["put ttl"]}, "\n"))
	check("put X-Geecache-Signature", put.Header.Get(HeaderSignature))
	if r := s.Serve(ctx, put); r.Status != 200 {
		t.Fatalf("the published PUT is refused: %d %q", r.Status, r.Body)
	}
}
