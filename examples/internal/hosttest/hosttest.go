//go:build !js

// Package hosttest runs the js/wasm node of examples/wasm in a JavaScript
// host (Deno, Bun, workerd, a browser) beside net/http nodes, for the
// tests of examples/wasm and examples/workers: it finds the host's binary,
// builds the node, starts the processes on 127.0.0.1 (ports the OS picks)
// and holds the checks every host must pass (Cluster, Keys).
package hosttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/getter"
	"github.com/geecache/geecache/internal/testkit"
)

// Root is the repository's root (where go.mod is), from the go command.
func Root(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env GOMOD: %v %q", err, out)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// Find returns the path of the host binary name: on PATH, else where
// scripts/js-hosts.sh installs it (.tools/js/NAME/node_modules/.bin/NAME);
// "" if it is in neither.
func Find(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(strings.TrimSpace(string(out))), ".tools", "js", name, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// Tool returns Find(name), or skips the test, saying how to install it.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p := Find(name)
	if p == "" {
		t.Skipf("%s is not installed: scripts/js-hosts.sh installs it at a pinned version into .tools/js (the test command runs it)", name)
	}
	return p
}

// BuildWasm builds examples/wasm for js/wasm into a temporary folder and
// returns the module's path and that of Go's wasm_exec.js.
func BuildWasm(t testing.TB) (wasm, wasmExec string) {
	t.Helper()
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	wasmExec = filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", "wasm_exec.js")
	wasm = filepath.Join(t.TempDir(), "node.wasm")
	cmd := exec.Command("go", "build", "-o", wasm, "github.com/geecache/geecache/examples/wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go build: %v\n%s", err, out)
	}
	return wasm, wasmExec
}

// Native is a node served by net/http in the test process, with the
// groups Scores and Echo (data.go).
type Native struct {
	URL          string
	DB           *DB
	Pool         *nethttp.Pool
	Scores, Echo *cache.Group
}

// StartNative starts a net/http node on 127.0.0.1 (a port the OS picks)
// with the given pool options (nil: none); it owns every key until its
// pool is Set. It stops when the test ends.
func StartNative(t testing.TB, opts *nethttp.PoolOptions) *Native {
	t.Helper()
	return StartSlowNative(t, opts, 0)
}

// StartSlowNative is StartNative with a database of scores that takes
// delay per lookup.
func StartSlowNative(t testing.TB, opts *nethttp.PoolOptions, delay time.Duration) *Native {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &Native{URL: "http://" + ln.Addr().String()}
	quiet := slog.New(slog.DiscardHandler)
	o := nethttp.PoolOptions{Logger: quiet}
	if opts != nil {
		o = *opts
		o.Logger = quiet
	}
	reg := cache.NewRegistry()
	if n.Pool, err = nethttp.NewPool(n.URL, reg, &o); err != nil {
		t.Fatal(err)
	}
	n.DB = NewDB(Dataset(), delay, quiet)
	// No hedging: the tests count which node loads each key.
	gopts := &cache.GroupOptions{Peers: n.Pool, Logger: quiet, PeerPolicy: cache.PeerPolicy{NoHedge: true}}
	if n.Scores, err = reg.NewGroup(Scores, CacheBytes, n.DB.Getter(n.URL), gopts); err != nil {
		t.Fatal(err)
	}
	if n.Echo, err = reg.NewGroup(Echo, CacheBytes, getter.Func(EchoLoad), gopts); err != nil {
		t.Fatal(err)
	}
	srv := nethttp.NewServer("", n.Pool, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Error(err)
		}
		_ = n.Pool.Close()
	})
	return n
}

// Proc is a host process serving a node's API: GET /api?key=K&group=G
// and GET /stats, as examples/wasm's shim.js and fetch.mjs do.
type Proc struct {
	URL    string // where the API is served
	cmd    *exec.Cmd
	out    *testkit.Buffer
	done   chan struct{}
	client *http.Client
}

// Start starts cmd and waits (at most a minute) until its output matches
// ready, whose first group, if any, is the URL it serves. The process gets
// SIGTERM when the test ends (SIGKILL 10 s later).
func Start(t testing.TB, cmd *exec.Cmd, ready *regexp.Regexp) *Proc {
	t.Helper()
	out := &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	tr := nethttp.NewTransport()
	p := &Proc{cmd: cmd, out: out, done: make(chan struct{}), client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop(t)
		tr.CloseIdleConnections()
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(cmd.Path), out.String())
		}
	})
	for range 600 {
		if m := ready.FindStringSubmatch(out.String()); m != nil {
			if len(m) > 1 {
				p.URL = m[1]
			}
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited: %v\n%s", filepath.Base(cmd.Path), cmd.ProcessState, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s was not ready within a minute:\n%s", filepath.Base(cmd.Path), out.String())
	return nil
}

// Output is what the process has written so far.
func (p *Proc) Output() string { return p.out.String() }

// Stop sends SIGTERM and waits for the process (SIGKILL after 10 s).
func (p *Proc) Stop(t testing.TB) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s did not stop on SIGTERM within 10s; killing it", filepath.Base(p.cmd.Path))
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Get asks the API at base (the process's URL, or a path under it) for key
// in group.
func (p *Proc) Get(ctx context.Context, base, group, key string) (int, string, error) {
	if base == "" {
		base = p.URL
	}
	u := base + "/api?key=" + url.QueryEscape(key) + "&group=" + url.QueryEscape(group)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// Report is what a node's /stats answers: its group "scores"'s Stats and
// the slow database's lookups per key.
type Report struct {
	Self    string
	Stats   cache.Stats
	Lookups map[string]int
}

// Stats reads the counters at base (empty: the process's URL).
func (p *Proc) Stats(ctx context.Context, base string) (Report, error) {
	var r Report
	if base == "" {
		base = p.URL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/stats", nil)
	if err != nil {
		return r, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return r, fmt.Errorf("/stats: %s %s", resp.Status, b)
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r)
	return r, err
}
