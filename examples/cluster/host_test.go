package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Built for GOOS=js and run in node.js (Go's own wasm_exec_node.js), the
// demo stops at once with exit status 1 and says that it cannot listen
// there and what to run instead, rather than log that it runs and then
// die with "all goroutines are asleep - deadlock!".
func TestJSBuildSaysItCannotServe(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node.js is not on PATH: this test runs the js/wasm build in node")
	}
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	wasm := filepath.Join(t.TempDir(), "cluster.wasm")
	build := exec.Command("go", "build", "-o", wasm, ".")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(strings.TrimSpace(string(root)), "lib", "wasm", "wasm_exec_node.js"), wasm, "-port=8001")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || ctx.Err() != nil {
		t.Fatalf("exit %d (%v, %v); want 1, at once:\n%s", code, err, ctx.Err(), out)
	}
	for _, want := range []string{"GOOS=js", "cannot listen", "examples/wasm"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "deadlock") || strings.Contains(string(out), "level=INFO") {
		t.Errorf("it started before it failed:\n%s", out)
	}
}

// checkHost lets every native platform through and stops the two wasm ones.
func TestCheckHost(t *testing.T) {
	if err := checkHost(runtime.GOOS); err != nil {
		t.Errorf("checkHost(%s) = %v; want nil", runtime.GOOS, err)
	}
	for _, goos := range []string{"js", "wasip1"} {
		if err := checkHost(goos); err == nil || !strings.Contains(err.Error(), "GOOS="+goos) {
			t.Errorf("checkHost(%s) = %v; want an error naming GOOS=%s", goos, err, goos)
		}
	}
}
