//go:build !js

package workers

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's recipe waits for the processes it starts by asking them,
// a bounded number of times, instead of sleeping blindly: every sleep of
// its shell block is inside a `for _ in $(seq N)` loop that breaks on an
// answer, and it asks the Worker's node (its first request starts it) and
// the net/http node before it uses them.
func TestREADMERecipeWaitsForReadiness(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "## Run it")
	if start < 0 {
		t.Fatal(`README.md has no "## Run it" section`)
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(text[start:])
	if block == nil {
		t.Fatal(`no sh block under "## Run it"`)
	}
	recipe := block[1]
	polled := regexp.MustCompile(`for _ in \$\(seq \d+\); do .*&& break; sleep [0-9.]+; done`)
	sleeps := 0
	for line := range strings.Lines(recipe) {
		if !strings.Contains(line, "sleep") {
			continue
		}
		sleeps++
		if !polled.MatchString(line) {
			t.Errorf("a sleep outside a bounded polling loop: %q", strings.TrimSpace(line))
		}
	}
	for _, url := range []string{"127.0.0.1:8001/", "127.0.0.1:8787/stats"} {
		if !regexp.MustCompile(`for _ in \$\(seq \d+\); do curl [^\n]*` + regexp.QuoteMeta(url) + ` && break`).MatchString(recipe) {
			t.Errorf("the recipe does not wait for %s to answer", url)
		}
	}
	if sleeps == 0 {
		t.Error("the recipe waits for nothing")
	}
}
