#!/bin/sh
# Runs the Lambda binding's integration test under the real AWS Lambda
# Runtime Interface Emulator: installs the pinned aws-lambda-rie into
# .tools/bin (gitignored), then runs the TestRIE* tests of adapters/lambda,
# which build examples/lambda as a linux bootstrap and start three emulators
# on 127.0.0.1. Extra arguments go to `go test` (for example -v).
set -eu
cd "$(dirname "$0")/.."
# The emulator's own go.mod needs go >= 1.26.6 to install it: that tool's
# requirement, more than GeeCache's (README.md, Install).
RIE_VERSION=v0.0.0-20261030222936-bef5c4ba774d
GOBIN="$PWD/.tools/bin" go install "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$RIE_VERSION"
GEECACHE_RIE="$PWD/.tools/bin/aws-lambda-rie" exec go test -race -count=1 -timeout 10m -run '^TestRIE' "$@" ./adapters/lambda/
