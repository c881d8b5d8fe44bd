//go:build !js && !wasip1

package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// maxGzipBytes bounds the js/wasm node's size, gzipped (level 9), built
// as sizeBuildFlags says: what a host that limits a script's size (a
// Cloudflare Worker: 3 MB on the Free plan, 10 MB on Paid, compressed)
// counts. Measured here: 7.16 MB raw, 2.00 MB gzipped (go 1.26.8). Most
// of it is what importing net/http costs under GOOS=js (its crypto/tls
// and crypto/x509 tables are initialised, so kept, even though the node
// never dials TLS): a program that does nothing but use net/http's Header
// is 1.34 MB gzipped, an empty one 0.54 MB. The target, 1.5 MB, needs a node
// without net/http (see examples/wasm/README.md, "Size"); until then this
// bound keeps it from growing. Raised from 1,950,000 by issue 19's batches
// (GetMany, RemoveMany, Purge and the batch protocol, on both sides of a
// node: +69 KB gzipped, 1.98 MB in all), then to 2,050,000 by issue 18's
// handoff and issue 17's multiplexed transport (+45 KB together, 2.03 MB
// by this test's gzip). Lowered to 2,000,000 (1,999,510 measured, go
// 1.26.8) by leaving the multiplexed carriage (adapters/nethttp/mux_*.go),
// which cannot apply without sockets, out of js and wasip1 builds: -35 KB
// gzipped; the bound keeps 10 KB of room above that.
const maxGzipBytes = 2_010_000

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
