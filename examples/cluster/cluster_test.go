//go:build !js

package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startTestCluster runs the demo in-process: three nodes and the API on
// 127.0.0.1 ports the OS picks.
func startTestCluster(t *testing.T, delay time.Duration) (api string, db *slowDB) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(t.Output(), nil))
	}
	return startLoggedCluster(t, delay, log)
}

// startLoggedCluster is startTestCluster with the logger of every node,
// of the API and of the slow database.
func startLoggedCluster(t *testing.T, delay time.Duration, log *slog.Logger) (api string, db *slowDB) {
	t.Helper()
	lns := map[string]net.Listener{}
	var peers []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := "http://" + ln.Addr().String()
		lns[p] = ln
		peers = append(peers, p)
	}
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	db = newSlowDB(scores(), delay, log)
	cl, err := startCluster(options{peers: peers, db: db, secret: []byte("test"), log: log}, lns, apiLn, peers[2])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return "http://" + apiLn.Addr().String(), db
}

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return resp.StatusCode, string(b)
}

func TestClusterDemo(t *testing.T) {
	api, db := startTestCluster(t, 50*time.Millisecond)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}

	// The tutorial's closing problem: three concurrent requests for Tom reach
	// the slow database once in the whole cluster.
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if st, body := get(t, c, api+"/api?key=Tom"); st != 200 || body != "630\n" {
				t.Errorf("Tom = %d %q; want 200 630", st, body)
			}
		})
	}
	wg.Wait()
	if n := db.Lookups("Tom"); n != 1 {
		t.Errorf("the slow database was searched for Tom %d times; want 1", n)
	}

	for _, tc := range []struct {
		query  string
		status int
		body   string
	}{
		{"?key=Tom", 200, "630\n"},
		{"?key=Jack", 200, "589\n"},
		{"?key=Sam", 200, "567\n"},
		{"?key=kkk", 404, "kkk not exist\n"},
		{"", 400, "missing key"},
		{"?key=", 400, "missing key"},
		{"?key=Tom&key=Jack&key=Sam&key=kkk", 200, "Tom 630\nJack 589\nSam 567\nkkk not exist\n"},
		{"?key=Tom&key=", 400, "missing key"},
	} {
		st, body := get(t, c, api+"/api"+tc.query)
		if st != tc.status || !strings.HasPrefix(body, tc.body) || !strings.HasSuffix(body, "\n") {
			t.Errorf("/api%s = %d %q; want %d %q", tc.query, st, body, tc.status, tc.body)
		}
	}
	for _, k := range []string{"Tom", "Jack", "Sam"} {
		if n := db.Lookups(k); n != 1 {
			t.Errorf("%s searched %d times; want 1", k, n)
		}
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil || c.port != 0 || len(c.peers) != 3 || c.api != "127.0.0.1:9999" {
		t.Fatalf("no flags: %+v, %v; want all three nodes and the API on 127.0.0.1:9999", c, err)
	}
	c, err = parseFlags([]string{"-port=8002"}, io.Discard)
	if err != nil || c.self() != "http://127.0.0.1:8002" || c.api != "" {
		t.Fatalf("-port=8002: %+v (self %q), %v", c, c.self(), err)
	}
	c, err = parseFlags([]string{"-port=8003", "-api=127.0.0.1:9999"}, io.Discard)
	if err != nil || c.api != "127.0.0.1:9999" {
		t.Fatalf("-port=8003 -api: %+v, %v", c, err)
	}
	for _, args := range [][]string{
		{"-port=9000"},
		{"-peers=localhost:8001"},
		{"-peers=http://127.0.0.1"},
		{"-peers= , "},
		{"extra"},
		{"-nope"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

// run starts what the flags ask for and stops cleanly when its context
// ends; here a single node on a port the OS picked, found through -peers.
func TestRunStopsOnCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close() // run listens itself; the port is free again (loopback, just picked)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	peer := "http://" + addr.String()
	go func() {
		done <- run(ctx, []string{"-peers=" + peer, "-port=" + strconv.Itoa(addr.Port), "-delay=1ms"}, io.Discard)
	}()
	// Wait until the node answers (bounded), then stop it.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var st int
	for i := 0; i < 200 && st == 0; i++ {
		if resp, err := c.Get(peer + "/_geecache/scores/Tom"); err == nil {
			st = resp.StatusCode
			resp.Body.Close()
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if st != 200 {
		t.Errorf("node answered %d; want 200", st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run = %v", err)
	}
}

// DELETE /api removes a key from every node: the next GET reaches the slow
// database once, on the owner.
func TestClusterDelete(t *testing.T) {
	api, db := startTestCluster(t, time.Millisecond)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	if st, body := get(t, c, api+"/api?key=Tom"); st != 200 || body != "630\n" {
		t.Fatalf("Tom = %d %q", st, body)
	}
	req, _ := http.NewRequest(http.MethodDelete, api+"/api?key=Tom", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "Tom removed\n" {
		t.Fatalf("DELETE = %d %q", res.StatusCode, body)
	}
	for range 3 {
		if st, body := get(t, c, api+"/api?key=Tom"); st != 200 || body != "630\n" {
			t.Fatalf("Tom after DELETE = %d %q", st, body)
		}
	}
	if n := db.Lookups("Tom"); n != 2 {
		t.Fatalf("the slow database was searched for Tom %d times; want 2 (once before and once after the DELETE)", n)
	}
}
