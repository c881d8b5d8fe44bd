// Package nethttp is the net/http binding of the GeeCache peer protocol
// (implemented in adapters/internal/protocol for every binding; the wire
// format is specified in adapters/PROTOCOL.md).
//
// It has these parts:
//
//   - Client, a cache.Peer that fetches values from one peer over a
//     tuned, shared http.Transport (NewTransport): keep-alive connections
//     sized for concurrency, a per-request timeout, the caller's context
//     passed through, and reads bounded by the bytes received: a peer that
//     announces a huge value and stalls costs one small buffer, and never
//     holds the caller past its deadline. Every answer is checked (see
//     cache.ErrIntegrity) before a value is returned.
//   - Pool, the GeeCache tutorial's HTTPPool made production-grade: an
//     http.Handler that answers peer requests for the groups of a
//     cache.Registry (mount it at the root, under Cluster.BasePath, or
//     behind http.StripPrefix) and a cache.PeerPicker (a consistent-hash
//     ring, the picker.Peers every binding uses) in one value, whose peer
//     list can be replaced at run time with Set. A node that
//     only serves is a Pool whose list is never set; a node that only
//     asks, one with no self.
//   - PoolOptions.Multiplex, off by default: a node's requests to each
//     plain-http peer go over one multiplexed connection (opened with an
//     HTTP/1.1 Upgrade on the peer's port, the protocol's own requests and
//     answers as frames; see "Multiplexed carriage" in PROTOCOL.md), with
//     HTTP/1.1 kept for peers that do not take the upgrade. Every Pool
//     accepts it.
//   - NewServer, an http.Server with the timeouts peer traffic needs, and
//     StatsHandler, the groups' Stats as JSON for operators.
//   - Listen, which starts a node in one call: it listens, makes the Pool
//     with the URL it got ("127.0.0.1:0" works too) and serves it, and
//     returns a Node with the Pool, its URL, Close and Drain.
//
// A node serves and calls its peers like this:
//
//	reg := cache.NewRegistry()
//	node, err := nethttp.Listen("10.0.0.1:8001", reg, &nethttp.NodeOptions{Pool: nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: secret}}})
//	if err != nil { ... }
//	defer node.Close()
//	err = node.Pool().Set("http://10.0.0.1:8001", "http://10.0.0.2:8001", "http://10.0.0.3:8001")
//	scores, err := reg.NewGroup("scores", 64<<20, db, &cache.GroupOptions{Peers: node.Pool()})
//
// node.URL() is "http://10.0.0.1:8001", as the peer lists name it. To
// serve the Pool beside routes of your own, over TLS, or only once
// something else is done, make the Pool and its Server yourself; the
// Pool's URL must then be known before it listens:
//
//	pool, err := nethttp.NewPool("http://10.0.0.1:8001", reg, &nethttp.PoolOptions{Cluster: nethttp.Cluster{Secret: secret}})
//	if err != nil { ... }
//	defer pool.Close()
//	mux.Handle("/_geecache/", pool)
//	err = nethttp.NewServer("10.0.0.1:8001", mux, nil).ListenAndServe()
//
// # Stopping a node
//
// A node stops at once, or gracefully after a drain; no call does both.
//
//   - At once (a test, a program whose peers need nothing from it):
//     Node.Close, or, for a Pool and Server of your own, Server.Close and
//     Pool.Close. None of them drains, whatever PoolOptions.DrainFor is.
//   - Gracefully (a rolling restart): take the node out of its discovery,
//     then Node.Drain(ctx); or Pool.Drain(ctx), which keeps the node
//     serving for PoolOptions.DrainFor (10 s by default) or until ctx ends
//     and hands its keys to their new owners, then Server.Shutdown(ctx),
//     which finishes the requests in flight, then Pool.Close.
//
// # Configuration
//
// Each constructor takes its required arguments and then a pointer to its
// own options struct (ClientOptions, PoolOptions,
// ServerOptions, NodeOptions), as every GeeCache package does: nil means all defaults,
// the zero value of a field means its documented default (0 for a timeout
// is 10 s, never "no timeout"; a nil Logger is slog.Default()),
// and a value that cannot work (a negative timeout, a base path without a
// leading "/", a peer URL without a scheme) makes the constructor, or Pool.Set, return an error
// wrapping cache.ErrConfig. A struct per constructor makes an option
// that does not apply to it a compile error rather than a setting silently
// ignored. Peer URLs are normalised (scheme and host in lower case, no
// default port, no trailing "/"), so that every node places "http://H:80/"
// and "http://h" on the ring as the same node; Pool.Self and Pool.Addrs
// return the normalised forms.
//
// Every node of a cluster must be given the same peer list and the same
// Cluster (BasePath, Secret, MaxValueBytes, Replicas and Hash): a
// PoolOptions holds it as PoolOptions.Cluster, beside the settings of the
// node alone, and a Lambda node as lambda.Config.Cluster.
//
// # Testing
//
// Package nethttptest starts n nodes inside one test, on 127.0.0.1 ports
// the OS picks, each with its own source and a fault that can be set per
// node (hung, slow, lying, down, partitioned).
//
// # WebAssembly
//
// Under GOOS=js a Client or Pool sends every peer request through the
// JavaScript host's fetch() (node.js 18 or later, Deno, Bun, browsers,
// Workers); net/http's own transport would not reach a peer there. Such a
// node cannot listen, so its host serves its peers through package
// adapters/wasmjs (wasmjs.Func(pool)). A js build links no net/http at all:
// the wire protocol is the same code, on its own header type, and the
// parts made of net/http (Pool.ServeHTTP, NewServer, Listen and Node,
// NewTransport, StatsHandler, the Transport and Multiplex options) are
// left out of it,
// which keeps a js/wasm node at about 1.45 MB gzipped instead of 2.0
// (examples/wasm, TestWasmNodeSize). Under GOOS=wasip1 no socket can be
// opened: peers are reachable only through a transport the host provides
// (ClientOptions.Transport or PoolOptions.Transport), and Listen fails.
// See examples/wasm.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/operations.md
//   - https://github.com/geecache/geecache/blob/main/docs/protocol.md
package nethttp
