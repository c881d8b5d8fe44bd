//go:build !js

package hosttest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// StartWorkerd copies config and the modules it embeds (the files of the
// folder dir named in files, each copied by its base name, and the js/wasm node with Go's wasm_exec.js) into
// a temporary folder and runs `workerd serve` there, its socket "http"
// on a 127.0.0.1 listener the OS picks, with env(its URL) added to its
// environment. It returns the process (its URL set) once workerd says it
// listens.
func StartWorkerd(t testing.TB, dir, config string, files []string, env func(url string) []string) *Proc {
	t.Helper()
	workerd := Tool(t, "workerd")
	if out, err := exec.Command(workerd, "--version").Output(); err == nil {
		t.Logf("%s", out)
	}
	wasm, wasmExec := BuildWasm(t)
	tmp := t.TempDir()
	copyFile(t, wasm, filepath.Join(tmp, "node.wasm"))
	copyFile(t, wasmExec, filepath.Join(tmp, "wasm_exec.js"))
	for _, f := range append(files, config) {
		copyFile(t, filepath.Join(dir, f), filepath.Join(tmp, filepath.Base(f)))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // lf keeps the socket open; workerd listens on it
	defer lf.Close()
	// fd 3 is the listener; --control-fd 1 prints {"event":"listen",...}
	// once workerd serves.
	cmd := exec.Command(workerd, "serve", config, "--socket-fd", "http=3", "--control-fd", "1")
	cmd.Dir = tmp
	cmd.ExtraFiles = []*os.File{lf}
	cmd.Env = append(os.Environ(), env(url)...)
	p := Start(t, cmd, regexp.MustCompile(`"event":"listen"`))
	p.URL = url
	return p
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
