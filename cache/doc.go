// Package cache is GeeCache's core: a read-through cache Group whose keys
// are spread over a set of peer nodes.
//
// A Get is answered from this node's memory when it can be. On a miss, the
// group asks its PeerPicker which node owns the key and fetches the value
// from that peer; when this node is the owner, or the owner cannot answer,
// the group calls its Getter (the user's loader from the source of truth)
// and keeps the value in a byte-bounded cache. Concurrent misses of one key
// share one load.
//
// The package is pure: it does no I/O of its own and imports no network or
// operating-system package, so it runs unchanged in a server, a serverless
// function, or a WebAssembly runtime (GOOS=wasip1 or js). Transports live in
// their own packages (adapters/nethttp, adapters/lambda), and peer
// selection in package picker.
package cache
