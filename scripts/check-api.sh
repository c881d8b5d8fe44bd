#!/usr/bin/env bash
# Fails when the exported surface of the main module's public packages
# (top-level names plus methods of exported types; internal/, examples/,
# bench/, mocks/ and nested modules left out) is above BUDGET, and prints
# the count per package either way. See internal/tools/apicount.
#
# BUDGET is a ratchet: it is the count the tree has now, and it only goes
# down. When a change removes exported names, lower it to the new count in
# the same commit; a change that needs a new exported name removes another
# one (or argues for it in review). 156 is the count after branches
# h-api-core (issue 16's cut of cache, getter, picker, nethttp, otel,
# wasmjs; 315 before), h-api-proto (adapters/protocol internal, one
# config sentinel; 199) and h-api-lambda (lambda 66 -> 28, lambdatest
# 11 -> 6, awsdefault 2 -> 1); 149 after h-shape-config (one
# nethttp.Cluster, one peer set: Pool and lambda.Peers embed picker.Peers);
# 146 after h-shape-peer (one peer interface: cache.PeerTTLGetter,
# cache.PeerUpdater and nethttp.Client.GetTTL gone); 150 after h-clustertest
# (issue 16 item 7: package nethttptest, 4 names). Lower it again as the other parts of issue 16 merge. Issue 16's target
# is 150. 145 after h-api (session of 2026-12-01: lambda.SigV4Transport and
# nethttp.FetchTransport unexported; NewSigV4Transport returns an http.RoundTripper).
# 148 after h-dns (issue 18: package discovery/dns, 3 names: Watch, Options,
# Stats). 152 after h-batch (issue 19: cache.Group.GetMany,
# Group.RemoveMany, Group.Purge, and nethttp.Client.Batch, the
# PeerGetter.Batch of the net/http transport; no result type: GetMany
# takes a callback). 154 after h-handoff (issue 18 items 2-4:
# nethttp.Pool.Shutdown, the graceful drain, and picker.Peers.PickFallback,
# a key's next live node and previous owner). 147 after the steps of a
# Get became named strings (Tracer.Start's step): cache.SpanKind, its String
# and its five constants gone. 149 after h-snap (issue 18: Group.Snapshot and
# Group.Restore, the warm restart in place; a damaged snapshot needs no
# sentinel, as every error of Restore means "start with what you have").
# 148 after h-at: ByteView.At gone (a byte by index is v.ByteSlice()[i], or
# v.Slice(i, i+1)), so that the count stays within issue 16's 150 as the
# team's tool counts it (../shared/tools/apicount counts the js and other
# definitions of nethttp's two options structs twice).
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET=148
go run ./internal/tools/apicount -budget "$BUDGET" .
echo "exported names within the budget of $BUDGET"
