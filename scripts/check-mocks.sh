#!/usr/bin/env bash
# Fails when the checked-in mocks differ from what mockgen (pinned in the
# go:generate lines of mocks/doc.go) generates from the current interfaces.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r mocks "$tmp/orig"
go generate ./mocks
if ! diff -r "$tmp/orig" mocks; then
  cp -r "$tmp/orig/." mocks/
  echo "mocks are stale: run 'go generate ./mocks' and commit the result"; exit 1
fi
echo "mocks up to date"
