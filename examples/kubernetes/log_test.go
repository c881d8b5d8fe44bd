package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/geecache/geecache/cache"
	"github.com/geecache/geecache/internal/testkit"
	"k8s.io/client-go/kubernetes/fake"
)

// jsonLines decodes the program's log, one JSON object a line.
func jsonLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a log line is not JSON: %v\n%s", err, sc.Text())
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		t.Fatal("no log line")
	}
	return out
}

// The program's JSON log shows durations as text ("100ms", not
// 100000000), the drain's among them, and its last line says that the
// node stopped.
func TestLogShowsDurationsAsTextAndTheExit(t *testing.T) {
	var logs testkit.Buffer
	_, stop, done := runNode(t, discoveryDNS, "geecache-peers", fake.NewClientset(), newLogger(&logs),
		"-dns-server="+dnsServer(t, "geecache-peers.shop.svc.cluster.local"), "-drain=100ms")
	testkit.WaitFor(t, "the node to run", func() bool { return strings.Contains(logs.String(), "geecache node is running") })
	stop()
	err := <-done
	done <- err // for runNode's cleanup
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	lines := jsonLines(t, logs.String())
	drained := false
	for _, l := range lines {
		if l["msg"] == "geecache: leaving, draining" {
			drained = true
			if l["for"] != "100ms" {
				t.Errorf(`the drain's "for" is %#v; want "100ms"`, l["for"])
			}
		}
	}
	if !drained {
		t.Errorf("no drain line in\n%s", logs.String())
	}
	if last := lines[len(lines)-1]; last["msg"] != "geecache node stopped" || last["level"] != "INFO" {
		t.Errorf("the last log line is %v; want the node's exit at INFO", last)
	}
}

// A node whose discovery cannot start logs its exit with the error, at
// ERROR, as its last line.
func TestLogShowsTheExitWithItsError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GEECACHE_SECRET": "s3cret"}
	cfg, err := parseFlags([]string{"-listen=" + ln.Addr().String(), "-self=http://127.0.0.1", "-dns-server=127.0.0.1:1", "-namespace=shop"},
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs testkit.Buffer
	done := make(chan error, 1)
	go func() { done <- run(context.Background(), cfg, ln, nil, newLogger(&logs)) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second): // a bound on the wait: it returns at once when right
		t.Fatal("run kept serving without its discovery")
	}
	if !errors.Is(err, cache.ErrConfig) {
		t.Fatalf("run = %v, want the discovery's configuration error", err)
	}
	lines := jsonLines(t, logs.String())
	last := lines[len(lines)-1]
	if e, _ := last["err"].(string); last["msg"] != "geecache node stopped" || last["level"] != "ERROR" || e != err.Error() {
		t.Errorf("the last log line is %v; want the node's exit at ERROR with %q", last, err)
	}
}
