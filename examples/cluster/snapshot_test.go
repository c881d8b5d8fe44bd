//go:build !js

package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/geecache/geecache/getter"
)

// A node restarted in place with -snapshot-dir answers the scores it held
// without asking the slow database again; the file is the node's alone.
func TestNodeRestartedInPlaceKeepsItsScores(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	self := "http://" + addr
	log := slog.New(slog.DiscardHandler)
	db := newSlowDB(scores(), time.Millisecond, log)
	o := options{peers: []string{self}, db: db, secret: []byte("test"), log: log, snapshots: dir}
	run := func(ln net.Listener, asked func(*node)) {
		t.Helper()
		cl, err := startCluster(o, map[string]net.Listener{self: ln}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		asked(cl.nodes[0])
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	score := func(n *node, key, want string) {
		t.Helper()
		v, err := n.group.Get(t.Context(), key)
		if want == "" {
			if !errors.Is(err, getter.ErrNotFound) {
				t.Fatalf("Get(%s) = %q, %v; want not found", key, v, err)
			}
			return
		}
		if err != nil || v.String() != want {
			t.Fatalf("Get(%s) = %q, %v; want %s", key, v, err, want)
		}
	}
	run(ln, func(n *node) {
		score(n, "Tom", "630")
		score(n, "Jack", "589")
		score(n, "kkk", "")
	})
	fi, err := os.Stat(snapshotPath(dir, self))
	if err != nil {
		t.Fatalf("no snapshot written: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("snapshot mode %v; want 0600", fi.Mode().Perm())
	}
	var again net.Listener
	for range 100 { // the port just closed may take a moment to be free
		if again, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	run(again, func(n *node) {
		score(n, "Tom", "630")
		score(n, "Jack", "589")
		score(n, "kkk", "") // a missing score is not cached here: asked again
	})
	for key, want := range map[string]int{"Tom": 1, "Jack": 1, "kkk": 2} {
		if got := db.Lookups(key); got != want {
			t.Errorf("the database was asked for %s %d times; want %d", key, got, want)
		}
	}
}

func TestSnapshotPathNamesTheNode(t *testing.T) {
	for addr, want := range map[string]string{
		"http://127.0.0.1:8001": "/d/scores-127.0.0.1_8001.snapshot",
		"http://[::1]:8001":     "/d/scores-__1_8001.snapshot",
	} {
		if got := snapshotPath("/d", addr); got != want {
			t.Errorf("snapshotPath(%q) = %q; want %q", addr, got, want)
		}
	}
}
