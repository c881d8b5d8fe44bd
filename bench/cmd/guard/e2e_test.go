package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A whole run on a module of its own: the old commit has BenchmarkSum and
// BenchmarkGone, the working tree BenchmarkSum (made to allocate) and
// BenchmarkNew. The guard compares BenchmarkSum, names the two one-sided
// benchmarks, flags the new allocation, fails with -fail, and leaves no
// worktree behind.
func TestGuardEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	root, commit := gitRepo(t)
	ctx := context.Background()
	write(t, filepath.Join(root, "go.mod"), "module example.com/m\n\ngo 1.26\n")
	write(t, filepath.Join(root, "p", "p_test.go"), `package p

import "testing"

var sink []int

func BenchmarkSum(b *testing.B) {
	for b.Loop() {
		sink = make([]int, 0, 4)
	}
}

func BenchmarkGone(b *testing.B) {
	for b.Loop() {
	}
}
`)
	if _, err := git(ctx, root, "add", "."); err != nil {
		t.Fatal(err)
	}
	if _, err := git(ctx, root, "commit", "--quiet", "-m", "two"); err != nil {
		t.Fatal(err)
	}
	old, err := git(ctx, root, "rev-parse", "HEAD")
	if err != nil || old == commit {
		t.Fatal(old, err)
	}
	write(t, filepath.Join(root, "p", "p_test.go"), `package p

import "testing"

var sink []int

func BenchmarkSum(b *testing.B) {
	for b.Loop() {
		sink = make([]int, 0, 4)
		sink = append(make([]int, 0, 1), sink...)
	}
}

func BenchmarkNew(b *testing.B) {
	for b.Loop() {
	}
}
`)
	t.Chdir(root)
	var out strings.Builder
	cfg := config{ref: old, rounds: 2, benchtime: "100x", threshold: 1.05, fail: true, timeout: time.Minute,
		raw: filepath.Join(t.TempDir(), "raw")}
	fams, err := parseFamilies("./p:^Benchmark")
	if err != nil {
		t.Fatal(err)
	}
	status, err := guard(ctx, cfg, fams, &out)
	if err != nil {
		t.Fatalf("guard: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"(with uncommitted changes)",
		"test files of ./p that differ between the trees (each side runs its own): p/p_test.go",
		"BenchmarkNew", "exists only in the new tree: skipped",
		"BenchmarkGone", "exists only in the old tree: skipped",
		"round 1/2 (old, new)", "round 2/2 (new, old)",
		"ALLOCS +1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	var sum string
	for line := range strings.Lines(text) {
		if strings.Contains(line, "BenchmarkSum") {
			sum = line
		}
	}
	if f := strings.Fields(sum); len(f) < 8 || f[7] != "1→2" {
		t.Errorf("BenchmarkSum row = %q, want allocs 1→2", sum)
	}
	if status != 1 {
		t.Errorf("status = %d with -fail and a regression, want 1", status)
	}
	for _, s := range []string{"old", "new"} {
		b, err := os.ReadFile(cfg.raw + "-" + s + ".txt")
		if err != nil || strings.Count(string(b), "BenchmarkSum") != 2 {
			t.Errorf("raw output of %s: %v, %d BenchmarkSum lines, want 2 (one per round)", s, err, strings.Count(string(b), "BenchmarkSum"))
		}
	}
	list, err := git(ctx, root, "worktree", "list", "--porcelain")
	if err != nil || strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left after the run (%v):\n%s", err, list)
	}
}
