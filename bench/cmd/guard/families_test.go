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

func TestNarrow(t *testing.T) {
	f := family{"ring", "./picker", "^(BenchmarkLookup|BenchmarkNew|BenchmarkRing)$/nodes=3"}
	got, notes, ok := narrow(f, []string{"BenchmarkLookup", "BenchmarkNew"}, []string{"BenchmarkLookup", "BenchmarkRing", "BenchmarkNew"})
	if !ok || got.pattern != "^(BenchmarkLookup|BenchmarkNew)$/nodes=3" {
		t.Errorf("narrow = %q, %v; want the two common names and the sub-pattern kept", got.pattern, ok)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "BenchmarkRing exists only in the new tree") {
		t.Errorf("notes = %q, want one about BenchmarkRing", notes)
	}
	re := regexp.MustCompile(splitBench(got.pattern)[0])
	if !re.MatchString("BenchmarkLookup") || re.MatchString("BenchmarkRing") || re.MatchString("BenchmarkLookupX") {
		t.Errorf("narrowed pattern %q matches the wrong names", got.pattern)
	}

	same, notes, ok := narrow(f, []string{"BenchmarkNew"}, []string{"BenchmarkNew"})
	if !ok || same != f || len(notes) != 0 {
		t.Errorf("narrow with equal sides = %+v, %q, %v; want the family unchanged", same, notes, ok)
	}
	if _, notes, ok := narrow(f, []string{"BenchmarkOld"}, nil); ok || len(notes) != 2 {
		t.Errorf("narrow with nothing in common: ok %v, notes %q; want false and two notes", ok, notes)
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

func TestResolveRefAndTestCodeDiffers(t *testing.T) {
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

	if d, err := testCodeDiffers(ctx, root, first, "./p"); err != nil || d {
		t.Errorf("testCodeDiffers with only p.go changed = %v, %v; want false", d, err)
	}
	write(t, filepath.Join(root, "p", "p_test.go"), "package p\n\n// changed, not committed\n")
	if d, err := testCodeDiffers(ctx, root, first, "./p"); err != nil || !d {
		t.Errorf("testCodeDiffers with p_test.go changed = %v, %v; want true", d, err)
	}
}
