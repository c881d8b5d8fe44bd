package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestParseFamilies(t *testing.T) {
	got, err := parseFamilies("hit, ring,./cache:^BenchmarkFetchFromPeer$/hedged")
	if err != nil {
		t.Fatal(err)
	}
	want := []family{
		{"hit", "./cache", "^BenchmarkGetHit$"},
		{"ring", "./picker", "^(BenchmarkLookup|BenchmarkPickPeer|BenchmarkNew|BenchmarkRebuild)$"},
		{"./cache:^BenchmarkFetchFromPeer$/hedged", "./cache", "^BenchmarkFetchFromPeer$/hedged"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseFamilies = %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "hot", "cache:^B$", "./cache:", "./cache:^(B$"} {
		if _, err := parseFamilies(bad); err == nil {
			t.Errorf("parseFamilies(%q) = nil error, want one", bad)
		}
	}
}

func TestLeaves(t *testing.T) {
	f := family{"ring", "./picker", "^(BenchmarkLookup|BenchmarkNew)$"}
	oldNames := []string{"BenchmarkLookup/xxhash/nodes=3-2", "BenchmarkNew/nodes=3-2", "BenchmarkGone-2"}
	newNames := []string{"BenchmarkNew/nodes=3-2", "BenchmarkLookup/xxhash/nodes=3-2", "BenchmarkLookup/fnv/nodes=3-2"}
	units, notes := leaves(f, oldNames, newNames, 2)
	want := []family{
		{"ring", "./picker", "^BenchmarkNew$/^nodes=3$"},
		{"ring", "./picker", "^BenchmarkLookup$/^xxhash$/^nodes=3$"},
	}
	if !slices.Equal(units, want) {
		t.Errorf("units = %+v, want %+v (the common benchmarks, in the new side's order)", units, want)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "BenchmarkLookup/fnv/nodes=3-2 exists only in the new tree") ||
		!strings.Contains(notes[1], "BenchmarkGone-2 exists only in the old tree") {
		t.Errorf("notes = %q, want one per one-sided benchmark", notes)
	}
	if units, notes := leaves(f, []string{"BenchmarkOld"}, nil, 2); len(units) != 0 || len(notes) != 2 {
		t.Errorf("leaves with nothing in common = %+v, %q; want no unit, two notes", units, notes)
	}
}

func TestLeafPatternSelectsOnlyThatBenchmark(t *testing.T) {
	for _, c := range []struct {
		name      string
		procs     int
		want      string
		matches   []string // names (levels) it must match
		unmatched []string
	}{
		{"BenchmarkGetHit/serial-2", 2, "^BenchmarkGetHit$/^serial$", []string{"BenchmarkGetHit/serial"}, []string{"BenchmarkGetHit/serial2", "BenchmarkGetHitX/serial"}},
		{"BenchmarkNew/nodes=10-4", 4, "^BenchmarkNew$/^nodes=10$", []string{"BenchmarkNew/nodes=10"}, []string{"BenchmarkNew/nodes=100"}},
		{"BenchmarkRemoteGet/1MiB", 1, "^BenchmarkRemoteGet$/^1MiB$", []string{"BenchmarkRemoteGet/1MiB"}, []string{"BenchmarkRemoteGet/1MiB-c4"}},
		{"BenchmarkX/a.b(c)-2", 2, `^BenchmarkX$/^a\.b\(c\)$`, []string{"BenchmarkX/a.b(c)"}, []string{"BenchmarkX/aXb(c)"}},
	} {
		got := leafPattern(c.name, c.procs)
		if got != c.want {
			t.Errorf("leafPattern(%q, %d) = %q, want %q", c.name, c.procs, got, c.want)
		}
		match := func(name string) bool {
			levels, pats := strings.Split(name, "/"), splitBench(got)
			if len(levels) != len(pats) {
				return false
			}
			for i := range levels {
				if !regexp.MustCompile(pats[i]).MatchString(levels[i]) {
					return false
				}
			}
			return true
		}
		for _, n := range c.matches {
			if !match(n) {
				t.Errorf("%q does not match %q", got, n)
			}
		}
		for _, n := range c.unmatched {
			if match(n) {
				t.Errorf("%q matches %q", got, n)
			}
		}
	}
}

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args      []string
		rounds    int
		benchtime string
	}{
		{nil, 5, "1s"},
		{[]string{"-short"}, 3, "100ms"},
		{[]string{"-short", "-rounds=4"}, 4, "100ms"},
		{[]string{"-short", "-benchtime=1000x"}, 3, "1000x"},
	} {
		cfg, err := parseFlags(c.args, io.Discard)
		if err != nil || cfg.rounds != c.rounds || cfg.benchtime != c.benchtime {
			t.Errorf("parseFlags(%q) = %d rounds of %s, %v; want %d of %s", c.args, cfg.rounds, cfg.benchtime, err, c.rounds, c.benchtime)
		}
	}
	for _, bad := range [][]string{{"-rounds=0"}, {"extra"}, {"-nosuchflag"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) = nil error, want one", bad)
		}
	}
}

// gitRepo makes a repository with one commit on main holding a package
// dir p (p/p.go, p/p_test.go) and returns its root and that commit.
func gitRepo(t *testing.T) (root, commit string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not on PATH")
	}
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
		"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
	} {
		t.Setenv(k, v)
	}
	root = t.TempDir()
	ctx := context.Background()
	must := func(args ...string) string {
		out, err := git(ctx, root, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	must("init", "--quiet", "--initial-branch=main")
	write(t, filepath.Join(root, "p", "p.go"), "package p\n")
	write(t, filepath.Join(root, "p", "p_test.go"), "package p\n")
	must("add", ".")
	must("commit", "--quiet", "-m", "one")
	return root, must("rev-parse", "HEAD")
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWorktreeIsRemovedAfterwards(t *testing.T) {
	root, commit := gitRepo(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "tree")
	remove, err := addWorktree(ctx, root, dir, commit)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p", "p.go")); err != nil {
		t.Errorf("the worktree lacks the commit's files: %v", err)
	}
	write(t, filepath.Join(dir, "p", "scratch.txt"), "an untracked file a build might leave\n")
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("worktree directory still there after remove: %v", err)
	}
	list, err := git(ctx, root, "worktree", "list", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(list, dir) {
		t.Errorf("git still lists the worktree:\n%s", list)
	}
}

func TestResolveRefAndTestCodeDiff(t *testing.T) {
	root, first := gitRepo(t)
	ctx := context.Background()
	if _, err := git(ctx, root, "switch", "--quiet", "-c", "topic"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "p", "p.go"), "package p\n\nconst X = 1\n")
	if _, err := git(ctx, root, "commit", "--quiet", "-am", "two"); err != nil {
		t.Fatal(err)
	}
	if got, err := resolveRef(ctx, root, ""); err != nil || got != first {
		t.Errorf("resolveRef(\"\") on a branch = %q, %v; want the merge-base with main %q", got, err, first)
	}
	if got, err := resolveRef(ctx, root, "HEAD~1"); err != nil || got != first {
		t.Errorf("resolveRef(HEAD~1) = %q, %v; want %q", got, err, first)
	}
	if _, err := resolveRef(ctx, root, "no-such-rev"); err == nil {
		t.Error("resolveRef(no-such-rev) = nil error, want one")
	}

	if d, err := testCodeDiff(ctx, root, first, "./p"); err != nil || len(d) != 0 {
		t.Errorf("testCodeDiff with only p.go changed = %q, %v; want none", d, err)
	}
	write(t, filepath.Join(root, "p", "p_test.go"), "package p\n\n// changed, not committed\n")
	if d, err := testCodeDiff(ctx, root, first, "./p"); err != nil || !slices.Equal(d, []string{"p/p_test.go"}) {
		t.Errorf("testCodeDiff with p_test.go changed = %q, %v; want [p/p_test.go]", d, err)
	}
}
