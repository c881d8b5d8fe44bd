//go:build !js && !wasip1

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// nodeJS returns the path of node.js (18 or later, for its global fetch),
// or skips the test.
func nodeJS(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node.js is not on PATH: the wasm example runs its node in node.js >= 18; install node to run this test")
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatalf("node --version: %v", err)
	}
	m := regexp.MustCompile(`^v(\d+)\.`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("node --version: unexpected %q", out)
	}
	if v, _ := strconv.Atoi(string(m[1])); v < 18 {
		t.Skipf("node.js %s is too old: the wasm example needs node >= 18 (global fetch)", bytes.TrimSpace(out))
	}
	return node
}

// buildWasm builds this example for js/wasm and returns the module's path
// and that of Go's wasm_exec.js.
func buildWasm(t testing.TB) (wasm, wasmExec string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the wasm node: %v", err)
	}
	root, err := exec.Command(goBin, "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	wasmExec = filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", "wasm_exec.js")
	wasm = filepath.Join(t.TempDir(), "node.wasm")
	cmd := exec.Command(goBin, "build", "-o", wasm, ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go build: %v\n%s", err, out)
	}
	return wasm, wasmExec
}

// wasmNode is the wasm node running in node.js.
type wasmNode struct {
	url    string
	cmd    *exec.Cmd
	out    *testkit.Buffer
	done   chan struct{} // closed when the process has exited
	client *http.Client
}

var listeningRE = regexp.MustCompile(`geecache wasm node listening on (http://127\.0\.0\.1:\d+)`)

// startWasmNode runs shim.js with the wasm module on 127.0.0.1 (a port the
// OS picks) and waits (at most a minute) until it is ready. The node is
// stopped when the test ends.
func startWasmNode(t testing.TB, node, wasm, wasmExec, secret string, goFlags ...string) *wasmNode {
	t.Helper()
	cmd := exec.Command(node, append([]string{"shim.js", "--listen=127.0.0.1:0", "--wasm-exec=" + wasmExec, wasm, "--"}, goFlags...)...)
	cmd.Env = append(os.Environ(), "GEECACHE_SECRET="+secret)
	return startProcess(t, cmd)
}

// startProcess starts cmd, a node.js server that prints listeningRE's line
// once it listens, and waits (at most a minute) for that line. The process
// is stopped when the test ends.
func startProcess(t testing.TB, cmd *exec.Cmd) *wasmNode {
	t.Helper()
	out := &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting node: %v", err)
	}
	tr := nethttp.NewTransport()
	w := &wasmNode{cmd: cmd, out: out, done: make(chan struct{}), client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	go func() {
		_ = cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		w.stop(t)
		tr.CloseIdleConnections()
		if t.Failed() {
			t.Logf("node.js output:\n%s", out.String())
		}
	})
	for i := 0; i < 600; i++ {
		if m := listeningRE.FindStringSubmatch(out.String()); m != nil {
			w.url = m[1]
			return w
		}
		select {
		case <-w.done:
			t.Fatalf("node.js exited: %v\n%s", cmd.ProcessState, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("node.js did not say it listens within a minute:\n%s", out.String())
	return nil
}

// stop asks the node to stop (SIGTERM) and kills it if it has not after
// 10 seconds.
func (w *wasmNode) stop(t testing.TB) {
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Errorf("the wasm node did not stop on SIGTERM within 10s; killing it")
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// kill kills the node at once (SIGKILL) and waits for it to be gone.
func (w *wasmNode) kill() {
	_ = w.cmd.Process.Kill()
	<-w.done
}

// get asks the node's API for key.
func (w *wasmNode) get(ctx context.Context, key string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.url+"/api?key="+key, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// stats reads the node's counters.
func (w *wasmNode) stats(ctx context.Context) (statsReport, error) {
	var r statsReport
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.url+"/stats", nil)
	if err != nil {
		return r, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return r, fmt.Errorf("/stats: %s", resp.Status)
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r)
	return r, err
}

// nativeNode is a node served by net/http in the test process.
type nativeNode struct {
	url   string
	db    *slowDB
	pool  *nethttp.Pool
	group *cache.Group
	srv   *nethttp.Server
	done  chan error
}

// startNative starts a net/http node on 127.0.0.1 (a port the OS picks)
// with the example's data set; it owns every key until its pool is Set.
func startNative(t testing.TB, secret string, delay time.Duration) *nativeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &nativeNode{url: "http://" + ln.Addr().String(), done: make(chan error, 1)}
	reg := cache.NewRegistry()
	quiet := slog.New(slog.DiscardHandler)
	if n.pool, err = nethttp.NewPool(n.url, reg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: []byte(secret)}, Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	n.db = newSlowDB(dataset(), delay, quiet)
	// No hedging: the test counts which node loads each key.
	n.group, err = reg.NewGroup(groupName, cacheBytes, n.db.Getter(n.url), &cache.GroupOptions{Peers: n.pool, Logger: quiet,
		PeerPolicy: cache.PeerPolicy{NoHedge: true}})
	if err != nil {
		t.Fatal(err)
	}
	n.srv = nethttp.NewServer("", n.pool, nil)
	go func() { n.done <- n.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.srv.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := <-n.done; !errors.Is(err, http.ErrServerClosed) {
			t.Error(err)
		}
		_ = n.pool.Close()
	})
	return n
}
