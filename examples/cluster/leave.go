//go:build !js

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// A peers file is the demo's discovery: the base URLs of the nodes in the
// cluster now, one per line, which every process re-reads each
// peersPoll. A node that starts adds itself; a node asked to stop
// (SIGTERM) removes itself first, so that the others drop it from their
// rings within peersPoll, then drains (nethttp.Pool.Drain: the new
// owners of its keys take them from its memory), then exits. DNS or
// Kubernetes plays this part in a real deployment.
const peersPoll = time.Second

// peersFile is the demo's discovery over a file. Processes on one machine
// share it; a change is written to a temporary file and renamed over it,
// so a reader never sees half a list.
type peersFile struct {
	path string
	mu   sync.Mutex // serialises this process's writes
}

// read returns the URLs in the file, sorted, without duplicates.
func (f *peersFile) read() ([]string, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return nil, err
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// update rewrites the file with add added and drop removed (a missing file
// is an empty list).
func (f *peersFile) update(add, drop []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, err := f.read()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	cur = slices.DeleteFunc(append(cur, add...), func(p string) bool { return slices.Contains(drop, p) })
	slices.Sort(cur)
	cur = slices.Compact(cur)
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".peers-*")
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(strings.Join(cur, "\n") + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// watch sets the list of every node of c whenever the file changes, until
// ctx ends; an empty or unreadable file keeps the last list (and is
// logged), so that a bad write cannot empty the rings. A node of c missing
// from the file (two processes that added themselves at once, each
// writing what it read) adds itself again.
func (f *peersFile) watch(ctx context.Context, c *cluster) {
	var last, mine []string
	for _, n := range c.nodes {
		mine = append(mine, n.addr)
	}
	t := time.NewTicker(peersPoll)
	defer t.Stop()
	for {
		list, err := f.read()
		if err == nil && slices.ContainsFunc(mine, func(a string) bool { return !slices.Contains(list, a) }) {
			if err = f.update(mine, nil); err == nil {
				list, err = f.read()
			}
		}
		switch {
		case err != nil || len(list) == 0:
			c.log.Warn("peers file unreadable or empty; keeping the last list", "path", f.path, "err", err)
		case !slices.Equal(list, last):
			last = list
			var errs []error
			for _, n := range c.nodes {
				if err := n.pool.Set(list...); err != nil {
					errs = append(errs, err)
				}
			}
			if err := errors.Join(errs...); err != nil {
				c.log.Warn("peers file: bad list", "err", err)
				break
			}
			// The library logs a change of the peer list at Debug only:
			// the demo shows each list it applies.
			c.log.Info("peers set from the peers file", "path", f.path, "peers", list)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// leave is the graceful stop of c's nodes: out of the peers file, then a
// drain of every node at once (each Pool's Drain), until ctx ends.
func (c *cluster) leave(ctx context.Context, f *peersFile) error {
	var mine []string
	for _, n := range c.nodes {
		mine = append(mine, n.addr)
	}
	if err := f.update(nil, mine); err != nil {
		return err
	}
	c.log.Info("left the peers file; draining", "nodes", mine)
	var wg sync.WaitGroup
	errs := make([]error, len(c.nodes))
	for i, n := range c.nodes {
		wg.Go(func() { errs[i] = n.pool.Drain(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
