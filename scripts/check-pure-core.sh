#!/usr/bin/env bash
# Fails if the pure core (the packages given as arguments) could not run in
# a WebAssembly runtime or a sandbox: no network, process or AWS package
# anywhere in its dependencies, and no direct use of os, syscall or unsafe
# system calls. (syscall itself is always a transitive dependency: package
# time imports it on every GOOS, including wasip1 and js.)
set -euo pipefail
bad_deps=$(go list -deps "$@" | grep -E '^(net|net/.*|os/exec|os/signal|os/user|plugin|crypto/tls|github\.com/aws/.*|go\.opentelemetry\.io/.*)$' || true)
if [ -n "$bad_deps" ]; then
  echo "the pure core depends on: $bad_deps"; exit 1
fi
bad_imports=$(go list -f '{{.ImportPath}}: {{join .Imports " "}} {{join .TestImports " "}}' "$@" \
  | grep -E ' (os|syscall|net|net/[^ ]*|os/[^ ]*)( |$)' || true)
if [ -n "$bad_imports" ]; then
  echo "a core package imports os, syscall or net directly:"; echo "$bad_imports"; exit 1
fi
echo "pure: $(go list "$@" | wc -l) packages, no network/process/AWS deps, no direct os or syscall"
