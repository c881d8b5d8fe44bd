#!/usr/bin/env bash
# Lists "package FuzzTarget" pairs for every fuzz target in the module.
set -euo pipefail
grep -rlE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' --include='*_test.go' . 2>/dev/null | grep -v '^./bench/' | sort | while read -r file; do
  dir=$(dirname "$file")
  grep -oE '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //' | while read -r target; do
    echo "$dir $target"
  done
done
