#!/usr/bin/env bash
# Runs a test binary (go test -exec) with the installed Go on PATH and as
# GOROOT, as scripts/test.sh saved them in GEECACHE_PATH and
# GEECACHE_GOROOT before it switched the race runs to another toolchain:
# the go commands a test runs then build with the installed Go.
set -euo pipefail
exec env GOTOOLCHAIN=local GOROOT="$GEECACHE_GOROOT" PATH="$GEECACHE_PATH" "$@"
