//go:build !js

package main

import (
	"bytes"
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/geecache/geecache/adapters/nethttp"
	"github.com/geecache/geecache/cache"
)

// The secret is never a flag (ps shows flags) and -h never prints it.
func TestSecretNeverInHelpOrFlags(t *testing.T) {
	const secret = "s3cret-from-env-7f1c"
	t.Setenv(envSecret, secret)
	var help bytes.Buffer
	if _, err := parseFlags([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: err = %v; want flag.ErrHelp", err)
	}
	if strings.Contains(help.String(), secret) {
		t.Errorf("-h prints the value of $%s:\n%s", envSecret, help.String())
	}
	if !strings.Contains(help.String(), "$"+envSecret) {
		t.Errorf("-h does not say where the secret comes from:\n%s", help.String())
	}
	var out bytes.Buffer
	if _, err := parseFlags([]string{"-secret=" + secret}, &out); err == nil {
		t.Error("a -secret flag was accepted; a secret in a flag shows in ps")
	}
	if strings.Contains(out.String(), secret) {
		t.Errorf("the refusal of -secret echoes it:\n%s", out.String())
	}
	c, err := parseFlags(nil, &out)
	if err != nil || c.secret != secret {
		t.Fatalf("secret from $%s = %q, %v; want %q", envSecret, c.secret, err, secret)
	}
}

func TestSecretFile(t *testing.T) {
	t.Setenv(envSecret, "")
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte("from-a-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := parseFlags([]string{"-secret-file=" + path}, &bytes.Buffer{})
	if err != nil || c.secret != "from-a-file" {
		t.Fatalf("-secret-file: secret %q, %v; want %q (the trailing newline dropped)", c.secret, err, "from-a-file")
	}
	if c, err := parseFlags(nil, &bytes.Buffer{}); err != nil || c.secret != "" {
		t.Fatalf("no secret at all: %q, %v; want unsigned", c.secret, err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"missing file": {"-secret-file=" + filepath.Join(t.TempDir(), "nope")},
		"empty file":   {"-secret-file=" + empty},
	} {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	t.Setenv(envSecret, "other")
	if _, err := parseFlags([]string{"-secret-file=" + path}, &bytes.Buffer{}); err == nil {
		t.Error("-secret-file and $GEECACHE_SECRET both set: accepted; one of them would be ignored")
	} else if strings.Contains(err.Error(), "other") || strings.Contains(err.Error(), "from-a-file") {
		t.Errorf("the error names the secret: %v", err)
	}
}

// Under the default ring the demo's keys are owned by every one of its
// three nodes, so the demo shows keys spread over the cluster (and no node
// sits idle). The owners are those of the default peers, as the README's
// log shows them.
func TestDemoKeysCoverEveryNode(t *testing.T) {
	c, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := nethttp.NewPool(c.peers[0], cache.NewRegistry(), &nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.Set(c.peers...); err != nil {
		t.Fatal(err)
	}
	owns := map[string][]string{}
	for key := range scores() {
		owns[pool.Owner(key)] = append(owns[pool.Owner(key)], key)
	}
	for _, p := range c.peers {
		if len(owns[p]) == 0 {
			t.Errorf("node %s owns none of the demo's keys (owners: %v)", p, owns)
		}
	}
	// The README's walk-through relies on these owners.
	for key, want := range map[string]string{"Tom": c.peers[0], "Ben": c.peers[1], "Leo": c.peers[2]} {
		if got := pool.Owner(key); got != want {
			t.Errorf("%s is owned by %s; the README says %s", key, got, want)
		}
	}
}

// The README's log of the demo names, for each key, the owner the default
// ring gives it, and the slow database is searched on that owner.
func TestREADMELogOwners(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := nethttp.NewPool(c.peers[0], cache.NewRegistry(), &nethttp.PoolOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.Set(c.peers...); err != nil {
		t.Fatal(err)
	}
	owner := regexp.MustCompile(`msg="api (?:request|delete)" key=(\S+) owner=(\S+)`)
	search := regexp.MustCompile(`msg="\[SlowDB\] search key" node=(\S+) key=(\S+)`)
	var seen int
	for line := range strings.SplitSeq(string(b), "\n") {
		if m := owner.FindStringSubmatch(line); m != nil {
			seen++
			if got := pool.Owner(m[1]); got != m[2] {
				t.Errorf("README: %s owned by %s; the default ring says %s", m[1], m[2], got)
			}
		}
		if m := search.FindStringSubmatch(line); m != nil {
			seen++
			if got := pool.Owner(m[2]); got != m[1] {
				t.Errorf("README: %s searched on %s; its owner is %s", m[2], m[1], got)
			}
		}
	}
	if seen == 0 {
		t.Error("README.md shows no log line of the demo")
	}
}
