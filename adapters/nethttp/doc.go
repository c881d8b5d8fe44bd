// Package nethttp is the net/http binding of the GeeCache peer protocol
// (package protocol; the wire format is specified in adapters/PROTOCOL.md).
//
// It has three parts:
//
//   - Handler, an http.Handler that answers peer requests for the groups of
//     a cache.Registry. Mount it at the root, under a base path
//     (WithBasePath), or behind http.StripPrefix.
//   - Client, a cache.PeerGetter that fetches values from one peer over a
//     tuned, shared http.Transport (NewTransport): keep-alive connections
//     sized for concurrency, bodies drained and closed, a per-request
//     timeout, and the caller's context passed through.
//   - Pool, the seed GeeCache's HTTPPool made production-grade: the Handler
//     and a cache.PeerPicker (a consistent-hash ring from package picker)
//     in one value, whose peer list can be replaced at run time with Set.
//
// A node serves and calls its peers like this:
//
//	reg := cache.NewRegistry()
//	pool := nethttp.NewPool("http://10.0.0.1:8001", reg)
//	defer pool.Close()
//	pool.Set("http://10.0.0.1:8001", "http://10.0.0.2:8001", "http://10.0.0.3:8001")
//	reg.NewGroup("scores", 64<<20, db, cache.WithPeers(pool))
//	http.ListenAndServe("10.0.0.1:8001", pool)
//
// Every node of a cluster must be given the same peer list, base path and
// protocol options (secret, size limit).
//
// # WebAssembly
//
// Under GOOS=js the default transport of Client and Pool is FetchTransport,
// which sends peer requests through the JavaScript host's fetch() (node.js
// 18 or later, Deno, browsers, Workers); net/http's own transport would
// not reach a peer there. Such a node cannot listen, so its host serves
// its peers through package adapters/wasmjs. Under GOOS=wasip1 no socket
// can be opened: peers are reachable only through a transport the host
// provides (WithTransport). See examples/wasm.
package nethttp
