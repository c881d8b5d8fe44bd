//go:build !js

package main

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/geecache/geecache/cache"
)

// This file is -snapshot-dir: a node restarted in place (the same -port)
// reads the memory it wrote when it stopped, so that it does not ask the
// slow database again for every score it held (docs/operations.md,
// "Restarting in place: a snapshot").

// snapshotPath is where the node at addr keeps its group's snapshot in
// dir: one file per node, named by its host and port.
func snapshotPath(dir, addr string) string {
	host := addr
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		host = u.Host
	}
	return filepath.Join(dir, groupName+"-"+strings.NewReplacer(":", "_", "[", "", "]", "").Replace(host)+".snapshot")
}

// restoreSnapshot reads the snapshot at path into g, if there is one. It
// runs after the node's peers are set and before it serves; any error
// leaves the node with what it read before it (logged, not fatal: a cache
// can always start empty).
func restoreSnapshot(ctx context.Context, g *cache.Group, path string, log *slog.Logger) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		log.Warn("snapshot not read", "path", path, "err", err)
		return
	}
	defer f.Close()
	n, err := g.Restore(ctx, f)
	if err != nil {
		log.Warn("snapshot read in part", "path", path, "values", n, "err", err)
		return
	}
	log.Info("snapshot read", "path", path, "values", n)
}

// saveSnapshot writes g's snapshot to path once the node's server has shut
// down, through a temporary file (mode 0600) renamed at the end, so that a
// crash leaves the old snapshot or the new one, never half of one.
func saveSnapshot(ctx context.Context, g *cache.Group, path string, log *slog.Logger) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".snapshot-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // nothing is left to remove once renamed
	n, err := g.Snapshot(ctx, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return err
	}
	log.Info("snapshot written", "path", path, "values", n)
	return nil
}
