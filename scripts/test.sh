#!/usr/bin/env bash
# The test command: every check CI runs, in the order a developer wants the
# answers. It installs the tools it needs itself, at pinned versions, into
# .tools/bin (gitignored); nothing has to be installed by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tools=$root/.tools/bin
mkdir -p "$tools"
export PATH="$tools:$PATH"

STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2
WAZERO=github.com/tetratelabs/wazero/cmd/wazero@v1.12.0
# The pure core.
CORE=(./cache/... ./picker/... ./getter/... ./internal/...)

step() { printf '\n== %s\n' "$*"; }

# The race runs use go1.27.3 where the installed Go is a go1.26: go1.26
# gives all the timers of a testing/synctest bubble one race-detector
# context, used by two threads at once when a timer fires in the bubble
# while another goroutine runs an expired one; ThreadSanitizer's state
# breaks and a -race run crashes at random (SIGSEGV in StackDepot::Put or
# "ThreadSanitizer: CHECK failed"; golang/go#78156). go1.27 gives each P
# its own. go.mod's go line stays 1.26: the module still builds with it.
# Only the race runtime is go1.27.3's: the test binaries run with the
# installed Go on PATH again (scripts/installed-go.sh), so that the go
# commands they run (the README's snippets, the previous release's demo,
# the js/wasm node whose size is bounded) build with the Go a user has.
race_env=()
race_exec=()
case $(go env GOVERSION) in
  go1.26 | go1.26.*)
    race_env=(GOTOOLCHAIN=go1.27.3)
    export GEECACHE_GOROOT GEECACHE_PATH
    GEECACHE_GOROOT=$(go env GOROOT) GEECACHE_PATH=$PATH
    race_exec=(-exec "$root/scripts/installed-go.sh")
    ;;
esac
race_test() { env "${race_env[@]}" go test -race "${race_exec[@]}" "$@"; }

step "gofmt"
unformatted=$(find . -name '*.go' -not -path './.tools/*' -print0 | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet"
go vet ./...

# Every package, tests included, as the two WebAssembly targets build it:
# a file whose build tags let it into a wasm build while the helpers it
# calls stay out compiles natively, so only a vet for that target sees it.
step "go vet under WebAssembly: GOOS=wasip1 and GOOS=js, GOARCH=wasm"
GOOS=wasip1 GOARCH=wasm go vet ./...
GOOS=js GOARCH=wasm go vet ./...

step "staticcheck ($STATICCHECK)"
go run "$STATICCHECK" ./...

step "exported surface within its budget (scripts/check-api.sh)"
scripts/check-api.sh

step "apicount, the tool behind check-api.sh: a module of its own (vet, staticcheck, tests)"
(cd scripts/apicount && go vet ./... && go run "$STATICCHECK" ./... && go test -count=1 ./...)

step "pure core: ${CORE[*]}"
scripts/check-pure-core.sh "${CORE[@]}"

step "mocks match mockgen's output"
scripts/check-mocks.sh

# Before go test: the tests of examples/wasm (TestDeno, TestBun,
# TestChromium) and examples/workers (TestWorker, TestDurableObjects) run
# the js/wasm node in these hosts, found in .tools/js; each skips, saying
# so, where its host could not be installed.
step "JavaScript hosts: Deno, Bun, workerd, Chromium (scripts/js-hosts.sh, pinned, cached in .tools/js)"
scripts/js-hosts.sh

# It includes adapters/nethttp/upgradetest, which checks out the previous
# release into a temporary git worktree, builds its demo and runs it beside
# the current nodes (it skips, saying why, without git, the go command or
# the full history). About 5 s once the build cache holds the previous
# release's packages; its first build adds about 40 s on two cores.
step "go test -race (${race_env[*]:-$(go env GOVERSION)})"
race_test -count=1 ./...

# A count, not a duration: go1.26's fuzz coordinator can report a bare
# "context deadline exceeded" when a -fuzztime duration expires on a busy
# machine (golang/go#75804, fixed in go1.27); a count has no deadline.
step "fuzz (briefly; run longer by hand, e.g. -fuzztime=5m)"
while read -r pkg target; do
  [ -n "$pkg" ] || continue
  go test -run='^$' -fuzz="^${target}\$" -fuzztime=100000x "$pkg"
done < <(scripts/fuzz-targets.sh)

step "core under WebAssembly: wasip1 (wazero) and js (node)"
GOBIN="$tools" go install "$WAZERO"
wasm_path="$PATH:$(go env GOROOT)/lib/wasm"
PATH="$wasm_path" GOWASIRUNTIME=wazero GOOS=wasip1 GOARCH=wasm go test -count=1 "${CORE[@]}"
if command -v node >/dev/null 2>&1; then
  PATH="$wasm_path" GOOS=js GOARCH=wasm go test -count=1 "${CORE[@]}"
else
  echo "SKIPPED: GOOS=js tests need Node.js 18 or later on PATH (not installed by this script)"
fi

step "WebAssembly nodes: fetch transport and wasmjs under node, the wasip1 example"
scripts/wasm-integration.sh

if [ -x scripts/lambda-integration.sh ]; then
  step "Lambda nodes under the real runtime emulator"
  env "${race_env[@]}" scripts/lambda-integration.sh
fi

step "SAM template: cfn-lint and the SAM transform (skipped without cfn-lint)"
scripts/check-template.sh

step "DNS discovery against a real DNS server on 127.0.0.1 (module discovery/dns/e2e, miekg/dns from the module proxy)"
(cd discovery/dns/e2e && go vet ./... && go run "$STATICCHECK" ./... && race_test -count=1 ./...)

if [ -f bench/go.mod ]; then
  step "bench module: vet, staticcheck and its tests (benchmarks run by hand, see bench/README.md)"
  (cd bench && go vet ./... && go run "$STATICCHECK" ./... && race_test -count=1 ./...)
fi

# Kubernetes discovery and its example are modules of their own, so that
# client-go never enters the main module's dependencies; this checks both.
step "Kubernetes: discovery/kubernetes and examples/kubernetes (vet, staticcheck, tests); no k8s.io in the main module"
if go list -deps -test ./... | grep -E '^(k8s\.io|sigs\.k8s\.io)/'; then
  echo "the main module depends on the Kubernetes modules above: they belong in discovery/kubernetes"; exit 1
fi
for mod in discovery/kubernetes examples/kubernetes; do
  (cd "$mod" && go vet ./... && go run "$STATICCHECK" ./... && race_test -count=1 ./...)
done

# The OpenTelemetry adapter is a module of its own too, so that
# go.opentelemetry.io never enters the main module's dependencies. Its
# WebAssembly vets stand in for the main module's, which no longer see it.
step "OpenTelemetry: adapters/otel (vet, also under WebAssembly, staticcheck, tests); no go.opentelemetry.io in the main module"
if go list -deps -test ./... | grep -E '^go\.opentelemetry\.io/'; then
  echo "the main module depends on the OpenTelemetry modules above: they belong in adapters/otel"; exit 1
fi
(cd adapters/otel && go vet ./... && GOOS=wasip1 GOARCH=wasm go vet ./... && GOOS=js GOARCH=wasm go vet ./... &&
  go run "$STATICCHECK" ./... && race_test -count=1 ./...)

step "all checks passed"
