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
// # Configuration
//
// Registry.NewGroup takes the required arguments and then a *GroupOptions,
// which may be nil. Every GeeCache package is configured this way: one
// options struct per constructor, in which the zero value of a field means
// its documented default, and a value that cannot work makes the
// constructor return an error. Unlike functional options shared by several
// constructors, a struct makes an option that does not apply a compile
// error, never a setting that is silently ignored, and go doc shows every
// option beside what it configures.
//
// # Errors
//
// Get returns a *Error that names the group and key and wraps the cause:
// getter.ErrNotFound for a missing key (from this node's Getter or from the
// owner peer, with the owner's own message), a *PanicError for a load that
// panicked, the Getter's error, or ctx's. An error a user sees starts with
// "geecache: " exactly once: the sentinels' own texts have no prefix.
//
// The package is pure: it does no I/O of its own and imports no network or
// operating-system package, so it runs unchanged in a server, a serverless
// function, or a WebAssembly runtime (GOOS=wasip1 or js). Transports live in
// their own packages (adapters/nethttp, adapters/lambda), and peer
// selection in package picker.
package cache
