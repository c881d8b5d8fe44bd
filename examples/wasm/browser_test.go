//go:build !js && !wasip1

package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/examples/internal/hosttest"
)

// The wasm node in a page of headless Chromium (browser/page.html, driven
// by browser/drive.cjs through playwright-core): a client of two net/http
// nodes that allow the page's origin and have no secret. It answers every
// key (Tom → 630) from its peers with 0 fallbacks, every key of the
// key-escaping test a JavaScript string holds comes back as itself, the
// missing key as missing; a GetMany of keys it has not asked yet (a POST
// of a batch to each owner, whose headers the preflight must allow) answers
// every key right, with 0 fallbacks and 0 peer errors; and a node that does
// not allow its origin is refused to it by the browser.
func TestChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not on PATH: scripts/js-hosts.sh installs it with apt-get (Debian's package chromium) where it can")
	}
	node := nodeJS(t)
	pw := filepath.Join(hosttest.Root(t), ".tools", "js", "playwright-core", "node_modules", "playwright-core")
	if _, err := os.Stat(pw); err != nil {
		t.Skipf("playwright-core is not installed in %s: scripts/js-hosts.sh installs it", pw)
	}
	wasm, wasmExec := hosttest.BuildWasm(t)
	// The page's origin: a file server on 127.0.0.1.
	dir := t.TempDir()
	for from, to := range map[string]string{wasm: "node.wasm", wasmExec: "wasm_exec.js", "browser/page.html": "page.html"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	origin := "http://" + ln.Addr().String()
	files := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go func() { _ = files.Serve(ln) }()
	t.Cleanup(func() { _ = files.Close() })

	opts := &nethttp.PoolOptions{AllowOrigins: []string{origin}}
	a, b := hosttest.StartNative(t, opts), hosttest.StartNative(t, opts)
	natives := []*hosttest.Native{a, b}
	for _, n := range natives {
		if err := n.Pool.Set(a.URL, b.URL); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(node, "browser/drive.cjs", "--playwright="+pw, "--chromium="+chromium,
		origin+"/page.html?peers="+a.URL+","+b.URL)
	p := hosttest.Start(t, cmd, regexp.MustCompile(`geecache browser node listening on (http://127\.0\.0\.1:\d+)`))
	if m := regexp.MustCompile(`chromium \S+`).FindString(p.Output()); m != "" {
		t.Log(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := hosttest.Node{Proc: p} // a client: it owns nothing
	hosttest.Cluster(t, ctx, w, natives)
	hosttest.Keys(t, ctx, w, natives, nil)
	getManyFromPage(t, ctx, p)

	// A node that does not list the page's origin: Chromium refuses the
	// page its answer (the CORS preflight fails), so the page loads the key
	// itself, counted as a fallback, and the node never serves the GET.
	closed := hosttest.StartNative(t, nil)
	page := origin + "/page.html?peers=" + closed.URL
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/open?url="+url.QueryEscape(page), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("opening %s: %s", page, resp.Status)
	}
	if st, body, err := p.Get(ctx, "", "scores", "Tom"); err != nil || st != 200 || body != "630" {
		t.Fatalf("Tom from the page, its peer closed to its origin = %d %q, %v; want 200 630", st, body, err)
	}
	r, err := p.Stats(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Stats.FallbackLoads != 1 || r.Stats.PeerLoads != 0 || closed.Scores.Stats().PeerRequests != 0 {
		t.Errorf("page: %d fallbacks, %d peer loads, the closed node served %d; want 1, 0, 0",
			r.Stats.FallbackLoads, r.Stats.PeerLoads, closed.Scores.Stats().PeerRequests)
	}
}

// getManyFromPage asks the page's node for keys it has not asked before
// (key-060 ... key-099, and the missing kkk) in one GetMany: the keys go
// to their owners in a batch each, a POST that Chromium sends only if the
// owner's CORS preflight allows its headers. Each key comes back right,
// and none was a fallback (a refused batch is the peer's error, and its
// keys fall back to the page's own load) or a peer error.
func getManyFromPage(t *testing.T, ctx context.Context, p *hosttest.Proc) {
	t.Helper()
	data := dataset()
	var keys []string
	for i := 60; i < 100; i++ {
		keys = append(keys, genKey(i))
	}
	keys = append(keys, "kkk")
	before, err := p.Stats(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"key": keys, "group": {groupName}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/many?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answers []struct {
		Status int
		Body   string
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&answers); err != nil || resp.StatusCode != 200 {
		t.Fatalf("getMany from the page: %s, %v", resp.Status, err)
	}
	if len(answers) != len(keys) {
		t.Fatalf("getMany from the page: %d answers for %d keys", len(answers), len(keys))
	}
	for i, k := range keys {
		want, st := data[k], 200
		if k == "kkk" {
			want, st = "kkk not exist", 404
		}
		if a := answers[i]; a.Status != st || a.Body != want {
			t.Errorf("getMany from the page: %s = %d %q; want %d %q", k, a.Status, a.Body, st, want)
		}
	}
	after, err := p.Stats(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if f, e := after.Stats.FallbackLoads-before.Stats.FallbackLoads, after.Stats.PeerErrors-before.Stats.PeerErrors; f != 0 || e != 0 {
		t.Errorf("getMany from the page: %d fallback loads, %d peer errors; want 0 and 0 (the batches reached their owners)", f, e)
	}
}
