// Command cluster is the GeeCache tutorial's three-node demo, made
// production-grade: cache nodes that share the group "scores" (the tutorial's
// slow database: Tom 630, Jack 589, Sam 567) over HTTP, and an API front
// end.
//
// With no flags it runs the whole demo in one process: three cache nodes on
// 127.0.0.1:8001, :8002 and :8003, and the API on 127.0.0.1:9999:
//
//	go run ./examples/cluster
//	curl '127.0.0.1:9999/api?key=Tom'   # 630
//	curl '127.0.0.1:9999/api?key=kkk'   # 404 kkk not exist
//	curl -X DELETE '127.0.0.1:9999/api?key=Tom'   # Tom removed, from every node
//
// With -port it runs one node per process instead, as in the tutorial's run.sh
// (see run.sh next to this file):
//
//	cluster -port=8001 &
//	cluster -port=8002 &
//	cluster -port=8003 -api=127.0.0.1:9999 &
//
// The flags are:
//
//	-port N      run only the node on port N (it must be one of -peers)
//	-peers LIST  comma-separated base URLs of all nodes
//	             (default http://127.0.0.1:8001,http://127.0.0.1:8002,http://127.0.0.1:8003)
//	-api ADDR    serve the API on ADDR; default 127.0.0.1:9999 without -port,
//	             none with it; "-api=" turns it off
//	-delay D     how long a lookup in the slow database takes (default 300ms)
//	-ttl D       how long a score stays fresh (default 0: until evicted or deleted)
//	-secret-file PATH
//	             read the shared peer secret from PATH; without it the
//	             secret is $GEECACHE_SECRET, and without either, peer
//	             requests are unsigned (fine on loopback only). The secret
//	             signs peer requests; it is never a flag, so ps and -h
//	             never show it
//	-v           debug logs: every peer pick
//	-peers-file PATH
//	             discovery: the nodes in the cluster now, one URL a line,
//	             re-read every second (an empty or unreadable file keeps
//	             the last list). A node adds itself when it starts
//	-drain D     with -peers-file, how long a stopping node keeps serving
//	             the new owners of its keys (default 5s)
//	-snapshot-dir DIR
//	             keep each node's memory across a restart in place: on
//	             exit, once its server is down, a node writes its scores
//	             to DIR/scores-HOST_PORT.snapshot; on start it reads them
//	             back before it serves (docs/operations.md, "Restarting in place")
//
// It logs which node owns each requested key and every lookup in the slow
// database, and runs until SIGINT or SIGTERM, then shuts down cleanly.
// With -peers-file the stop is graceful: the node removes itself from the
// file first (the other nodes drop it from their rings within a second),
// then drains for -drain (nethttp.Pool.Drain: the keys' new owners take
// them from its memory instead of the slow database), then finishes the
// requests in flight and exits. A rolling restart, one node at a time:
//
//	cluster -port=8001 -peers-file=peers.txt &   # and 8002, 8003 alike
//	kill -TERM %1; wait %1; cluster -port=8001 -peers-file=peers.txt &
//
// Every address must be on a loopback or private interface you control:
// nodes listen on the host:port of their own URL.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}
