package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestRunLoadsEachKeyOnceOnItsOwner(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out, 0); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"Tom = 630", "Jack = 589", "Sam = 567", "kkk -> geecache"} {
		if got := strings.Count(text, want); got != 3 {
			t.Errorf("%q appears %d times, want 3 (once per node):\n%s", want, got, text)
		}
	}
	for _, key := range []string{"Tom", "Jack", "Sam"} {
		if got := strings.Count(text, " key="+key+"\n"); got != 1 {
			t.Errorf("slow db searched %s %d times, want 1:\n%s", key, got, text)
		}
	}
	// A missing key is not cached: each node's Get asks the owner's source.
	if got := strings.Count(text, " key=kkk\n"); got != 3 {
		t.Errorf("slow db searched kkk %d times, want 3:\n%s", got, text)
	}
}

func TestOwnerLoadsAndOthersFetch(t *testing.T) {
	var out bytes.Buffer
	db := newSlowDB(scores(), 0, slog.New(slog.NewTextHandler(&out, nil)))
	nodes, err := newCluster([]string{"a", "b", "c"}, db)
	if err != nil {
		t.Fatal(err)
	}
	owner := nodes[0].peers.Owner("Tom")
	for _, n := range nodes {
		if v, err := n.scores.Get(t.Context(), "Tom"); err != nil || v.String() != "630" {
			t.Fatalf("%s: Get = %q, %v", n.name, v, err)
		}
	}
	if db.Lookups("Tom") != 1 || !strings.Contains(out.String(), "node="+owner+" key=Tom") {
		t.Fatalf("Tom was not loaded by its owner %s:\n%s", owner, out.String())
	}
	for _, n := range nodes {
		s := n.scores.Stats()
		if n.name == owner && (s.LocalLoads != 1 || s.PeerRequests == 0) {
			t.Errorf("owner %s stats %+v", n.name, s)
		}
		if n.name != owner && (s.PeerLoads != 1 || s.Hot.Items != 1 || s.LocalLoads != 0) {
			t.Errorf("non-owner %s stats %+v", n.name, s)
		}
	}
}
