//go:build !js && !wasip1

package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxGzipBytes bounds the js/wasm node's size, gzipped (level 9), built
// as sizeBuildFlags says: what a host that limits a script's size (a
// Cloudflare Worker: 3 MB on the Free plan, 10 MB on Paid, compressed)
// counts. The target is 1.5 MB, within reach because the node links no
// net/http (TestWasmNodeLinksNoNetHTTP): with it, the node would be about
// 2.00 MB gzipped, for crypto/tls and crypto/x509 (elliptic curves, RSA,
// ML-KEM, math/big, ASN.1), which net/http's initialisation keeps although
// a js node never dials TLS. The bound keeps about 15 KB of room above the
// measured size (1,480,202 bytes with go 1.26.8), so that growth is seen;
// raise it only with a reason, given in the commit that raises it.
const maxGzipBytes = 1_495_000

// noNetHTTP are the packages a js/wasm node must not link: net/http (and
// what importing it costs, initialised whether used or not: crypto/tls,
// crypto/x509), and package net, which net/url does not need.
var noNetHTTP = []string{"net/http", "crypto/tls", "crypto/x509", "net"}

// sizeBuildFlags is how the size is measured: -s -w drop the symbol table
// and DWARF (little, under wasm: 0.04 MB gzipped), -trimpath the file
// paths.
var sizeBuildFlags = []string{"-trimpath", "-ldflags=-s -w"}

// The js/wasm node, built with sizeBuildFlags and gzipped, stays within
// maxGzipBytes.
func TestWasmNodeSize(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the wasm node: %v", err)
	}
	wasm := filepath.Join(t.TempDir(), "node.wasm")
	cmd := exec.Command(goBin, append(append([]string{"build"}, sizeBuildFlags...), "-o", wasm, ".")...)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go build: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("js/wasm node (go build %v): %d bytes, %d gzipped (bound %d)", sizeBuildFlags, len(raw), gz.Len(), maxGzipBytes)
	if gz.Len() > maxGzipBytes {
		t.Errorf("the js/wasm node is %d bytes gzipped, over the bound of %d", gz.Len(), maxGzipBytes)
	}
}

// The js/wasm node links none of noNetHTTP: under GOOS=js package nethttp
// sends with the host's fetch() and serves through package wasmjs on the
// protocol's own types, and importing net/http would add 0.55 MB gzipped
// (its TLS and X.509 code) that such a node never runs.
func TestWasmNodeLinksNoNetHTTP(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the wasm node's packages: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !slices.Contains(deps, "github.com/geecache/geecache/adapters/nethttp") {
		t.Fatalf("go list -deps gave %d packages, without adapters/nethttp: %q", len(deps), out)
	}
	for _, p := range noNetHTTP {
		if slices.Contains(deps, p) {
			t.Errorf("the js/wasm node links %s", p)
		}
	}
}
