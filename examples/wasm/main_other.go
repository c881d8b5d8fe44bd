//go:build !js

package main

import (
	"fmt"
	"os"
)

// main explains how to build and run the node: it only runs as js/wasm.
func main() {
	fmt.Fprintln(os.Stderr, `this node runs under node.js as WebAssembly:
  GOOS=js GOARCH=wasm go build -o node.wasm ./examples/wasm
  node examples/wasm/shim.js --wasm-exec="$(go env GOROOT)/lib/wasm/wasm_exec.js" node.wasm -- -peers=http://127.0.0.1:8001,http://127.0.0.1:8002
see examples/wasm/README.md`)
	os.Exit(2)
}
