package main

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The Dockerfile builds from the repository's root with COPY . .: the
// build context must leave out what git leaves out (.tools holds the
// JavaScript hosts and browsers scripts/test.sh installs, hundreds of
// megabytes; bin, test binaries, profiles) and .git, or every build sends
// and copies all of it.
func TestDockerContextLeavesOutWhatGitIgnores(t *testing.T) {
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(df), "COPY . .") {
		t.Skip("the Dockerfile no longer copies the whole root")
	}
	lines := func(path string) []string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (the Dockerfile's context is the repository's root)", err)
		}
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, strings.Trim(l, "/"))
			}
		}
		return out
	}
	ignored := lines("../../.dockerignore")
	for _, want := range append(lines("../../.gitignore"), ".git") {
		if !slices.Contains(ignored, want) && !slices.Contains(ignored, "**/"+want) {
			t.Errorf(".dockerignore does not leave out %q", want)
		}
	}
}
