//go:build !js

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// The demo in-process on ports the OS picks: the API answers from the
// cluster, and the slow database is searched once per key.
func Example() {
	lns := map[string]net.Listener{}
	var peers []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println(err)
			return
		}
		peers = append(peers, "http://"+ln.Addr().String())
		lns[peers[len(peers)-1]] = ln
	}
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	log := slog.New(slog.DiscardHandler)
	db := newSlowDB(scores(), time.Millisecond, log)
	cl, err := startCluster(options{peers: peers, db: db, log: log}, lns, apiLn, peers[2])
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cl.shutdown(context.Background())
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	for _, key := range []string{"Tom", "Tom", "kkk"} {
		resp, err := (&http.Client{Transport: tr}).Get("http://" + apiLn.Addr().String() + "/api?key=" + key)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s: %d %s\n", key, resp.StatusCode, bytes.TrimSpace(body))
	}
	fmt.Println("Tom searched", db.Lookups("Tom"), "time(s)")
	// Output:
	// Tom: 200 630
	// Tom: 200 630
	// kkk: 404 kkk not exist
	// Tom searched 1 time(s)
}
