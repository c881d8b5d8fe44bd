#!/bin/sh
# WebAssembly nodes that talk to peers (examples/wasm, adapters/wasmjs, the
# fetch transport of adapters/nethttp), in node.js:
#   1. the js-only tests, run under node by Go's go_js_wasm_exec: the fetch
#      transport against node's http server, and the exported serve function;
#   2. examples/wasip1 (a module of its own, for wazero): a wasip1 node
#      hosted by wazero reaches its peer through a function the host gives it;
#   3. the mixed cluster: examples/wasm built for js/wasm and run by
#      examples/wasm/shim.js in node, with two net/http nodes in the test.
# 1 and 3 need node.js >= 18 on PATH; without it they are skipped, saying so.
# Extra arguments go to the mixed-cluster `go test` (for example -v).
set -eu
cd "$(dirname "$0")/.."
# staticcheck, pinned as in scripts/test.sh, built for this machine and run
# on the js and wasip1 code too.
GOBIN="$PWD/.tools/bin" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
sc="$PWD/.tools/bin/staticcheck"
GOOS=js GOARCH=wasm go vet ./...  # every package: those that cannot apply under js (Lambda, the test cluster) say so by build tag
GOOS=js GOARCH=wasm "$sc" ./adapters/nethttp/ ./adapters/wasmjs/ ./examples/wasm/ ./adapters/internal/protocol/ ./adapters/internal/hostserve/
(cd examples/wasip1 && go vet ./... && GOOS=wasip1 GOARCH=wasm go vet ./guest &&
  "$sc" ./... && GOOS=wasip1 GOARCH=wasm "$sc" ./guest && go test -race -count=1 ./...)
if ! command -v node >/dev/null 2>&1; then
  echo "wasm-integration: node.js is not on PATH; skipping (install node >= 18 to run the WebAssembly tests)"
  exit 0
fi
echo "wasm-integration: node $(node --version)"
# The js build of adapters/nethttp has only its fetch tests (the others
# are of the net/http side, which a js build leaves out). The wire
# protocol runs its own tests (the PROTOCOL.md vectors included) under js
# too: there it is built on its own header type instead of net/http's.
PATH="$PATH:$(go env GOROOT)/lib/wasm" GOOS=js GOARCH=wasm go test -count=1 ./adapters/nethttp/ \
  ./adapters/internal/protocol/ ./adapters/internal/hostserve/ ./adapters/internal/peerhttp/
PATH="$PATH:$(go env GOROOT)/lib/wasm" GOOS=js GOARCH=wasm go test -count=1 ./adapters/wasmjs/
# examples/wasm's TestMixedCluster runs in the test command's go test ./...
# (it skips there without node).
