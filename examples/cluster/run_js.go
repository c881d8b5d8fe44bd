//go:build js

package main

import (
	"context"
	"io"
	"runtime"
)

// run says why the demo cannot run here: its nodes serve with net/http,
// which cannot listen under GOOS=js, so a js build of package nethttp has
// no server at all (no net/http is linked there; the host serves through
// adapters/wasmjs).
func run(context.Context, []string, io.Writer) error { return checkHost(runtime.GOOS) }
