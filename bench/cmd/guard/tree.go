package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// git runs git in dir and returns its trimmed standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// resolveRef turns -ref into a commit hash. An empty ref means the
// merge-base of HEAD and main: on a branch, the main it started from (or
// last merged); on main itself, HEAD, so that uncommitted changes are what
// is measured.
func resolveRef(ctx context.Context, root, ref string) (string, error) {
	if ref == "" {
		return git(ctx, root, "merge-base", "HEAD", "main")
	}
	return git(ctx, root, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
}

// addWorktree checks commit out, detached, into a new worktree at dir and
// returns the function that removes it again (and prunes its record).
func addWorktree(ctx context.Context, root, dir, commit string) (remove func() error, err error) {
	if _, err := git(ctx, root, "worktree", "add", "--detach", "--quiet", dir, commit); err != nil {
		return nil, err
	}
	return func() error {
		// Not ctx: the worktree must go even after an interrupt.
		_, err := git(context.Background(), root, "worktree", "remove", "--force", dir)
		if err != nil {
			err = errors.Join(err, os.RemoveAll(dir))
			_, perr := git(context.Background(), root, "worktree", "prune")
			err = errors.Join(err, perr)
		}
		return err
	}, nil
}

// testCodeDiff returns the _test.go files of the package at pkgDir
// (relative to root) that differ between commit and the working tree: if
// a file that defines a benchmark is among them, the two sides do not run
// the same benchmark code.
func testCodeDiff(ctx context.Context, root, commit, pkgDir string) ([]string, error) {
	out, err := git(ctx, root, "diff", "--name-only", commit, "--",
		":(glob)"+filepath.ToSlash(filepath.Join(pkgDir, "*_test.go")))
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// buildTest compiles the test binary of pkg (a path relative to the tree's
// root, "./cache") in tree into out, as `go test -c` does.
func buildTest(ctx context.Context, tree, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", out, pkg)
	cmd.Dir = tree
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go test -c %s in %s: %w\n%s", pkg, tree, err, b)
	}
	return nil
}

// runBinary runs a test binary in dir (the package's directory, as go test
// does) with args and returns its standard output; on failure the error
// carries the tail of both outputs.
func runBinary(ctx context.Context, bin, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(bin), strings.Join(args, " "), err,
			tail(stdout.String(), 20), tail(stderr.String(), 20))
	}
	return stdout.String(), nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if out := strings.Join(lines, ""); out != "" {
		return out + "\n"
	}
	return ""
}

// loadAvg returns the 1-minute load average (Linux), or "?".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
