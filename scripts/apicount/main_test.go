package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// The fixture module's surface, by package: what a user of it could name.
var want = map[string][]string{
	".": {"Root"},
	"shapes": {"Area", "Max", "Min", "Pair", "Pair.Swap", "Platform", "Shape",
		"Square", "Square.Area", "Square.Scale", "Unit"},
}

func TestCountFixture(t *testing.T) {
	pkgs, err := count("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, p := range pkgs {
		got[p.Dir] = p.Names
	}
	for dir, names := range want {
		if !slices.Equal(got[dir], names) {
			t.Errorf("%s: got %q, want %q", dir, got[dir], names)
		}
	}
	for dir := range got {
		if _, ok := want[dir]; !ok {
			t.Errorf("counted %s (%q): internal, examples, main, nested modules and packages exporting nothing are left out", dir, got[dir])
		}
	}
}

func TestRunBudget(t *testing.T) {
	for _, tc := range []struct {
		budget string
		code   int
	}{{"12", 0}, {"13", 0}, {"11", 1}, {"0", 1}} {
		var out, errOut bytes.Buffer
		code := run([]string{"-budget", tc.budget, "testdata/mod"}, &out, &errOut)
		if code != tc.code {
			t.Errorf("budget %s: exit %d, want %d (stderr %q)", tc.budget, code, tc.code, errOut.String())
		}
		if !strings.HasPrefix(out.String(), "total 12\n") {
			t.Errorf("budget %s: output %q does not start with the total 12", tc.budget, out.String())
		}
		if !strings.Contains(out.String(), "\nshapes ") {
			t.Errorf("budget %s: output %q has no line for package shapes", tc.budget, out.String())
		}
		if over := strings.Contains(errOut.String(), "above the budget"); over != (tc.code == 1) {
			t.Errorf("budget %s: stderr %q", tc.budget, errOut.String())
		}
	}
}

func TestRunList(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-list", "testdata/mod"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "\n    Pair.Swap\n") {
		t.Errorf("-list output has no Pair.Swap line:\n%s", out.String())
	}
}

func TestRunErrors(t *testing.T) {
	for _, args := range [][]string{{"testdata/no-such-dir"}, {"a", "b"}, {"-budget", "x", "."}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
