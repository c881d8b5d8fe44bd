//go:build !js

package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/geecache/geecache/internal/testkit"
)

// Two nodes in their own run, sharing a peers file: each adds itself; on
// its stop (the cancel a SIGTERM makes) node B removes itself from the
// file, drains and returns, and node A drops B from its ring by the file.
func TestPeersFileLeaveThenDrain(t *testing.T) {
	var peers []string
	var ports []int
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
		peers = append(peers, "http://"+ln.Addr().String())
		ln.Close() // run listens itself
	}
	file := filepath.Join(t.TempDir(), "peers")
	var logA testkit.Buffer
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	args := func(i int) []string {
		return []string{"-peers=" + strings.Join(peers, ","), "-port=" + strconv.Itoa(ports[i]), "-delay=1ms",
			"-peers-file=" + file, "-drain=100ms"}
	}
	go func() { doneA <- run(ctxA, args(0), &logA) }()
	go func() { doneB <- run(ctxB, args(1), &testkit.Buffer{}) }()
	pf := &peersFile{path: file}
	testkit.WaitFor(t, "both nodes in the peers file", func() bool {
		l, _ := pf.read()
		return slices.Equal(l, slices.Sorted(slices.Values(peers)))
	})
	testkit.WaitFor(t, "node A's ring to hold both", func() bool {
		return strings.Contains(logA.String(), "peers=\"["+strings.Join(slices.Sorted(slices.Values(peers)), " ")+"]\"")
	})
	stopB()
	if err := <-doneB; err != nil {
		t.Fatalf("node B's run = %v", err)
	}
	if l, err := pf.read(); err != nil || !slices.Equal(l, peers[:1]) {
		t.Errorf("peers file after B left: %q, %v; want only A", l, err)
	}
	if b, _ := os.ReadFile(file); len(b) == 0 {
		t.Error("the peers file is empty")
	}
	testkit.WaitFor(t, "node A to drop B", func() bool {
		return strings.Contains(logA.String(), "peers=["+peers[0]+"]")
	})
	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("node A's run = %v", err)
	}
}
