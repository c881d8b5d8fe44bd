//go:build !wasip1 && !js

// Command wasip1 hosts a GeeCache node built for WASI preview 1 (./guest)
// in wazero, and gives it the network it lacks: the module imports
// geecache.fetch, which this host implements with a nethttp.Client, so the
// node fetches keys it does not own from a peer served by net/http. The
// node itself is asked for keys through its exported get.
//
// Run it with
//
//	go run . [-guest guest.wasm]
//
// from examples/wasip1 (a module of its own, so that wazero stays out of
// the library's go.mod). Without -guest it builds ./guest first.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

func main() {
	guest := flag.String("guest", "", "the guest module (default: build ./guest)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := start(ctx, *guest); err != nil {
		fmt.Fprintln(os.Stderr, "wasip1:", err)
		os.Exit(1)
	}
}

func start(ctx context.Context, guestPath string) error {
	if guestPath == "" {
		dir, err := os.MkdirTemp("", "geecache-wasip1")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		guestPath = filepath.Join(dir, "guest.wasm")
		if err := buildGuest(ctx, guestPath); err != nil {
			return err
		}
	}
	wasm, err := os.ReadFile(guestPath)
	if err != nil {
		return err
	}
	d, err := startDemo(ctx, wasm)
	if err != nil {
		return err
	}
	defer d.close(ctx)
	for _, key := range []string{"Tom", "Jack", "Sam", "kkk"} {
		v, err := d.guest.get(ctx, key)
		fmt.Printf("%-4s owner %-22s -> %q, err %v\n", key, d.owner(key), v, err)
	}
	fmt.Printf("the host fetched %d keys from the peer for the guest\n", d.fetches.Load())
	return nil
}

// buildGuest builds ./guest as a wasip1 reactor module at out.
func buildGuest(ctx context.Context, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-o", out, "./guest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared ./guest: %w\n%s", err, b)
	}
	return nil
}
