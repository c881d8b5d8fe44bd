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
// # Writes and reads
//
// Group.Set, Group.Remove, Group.RemoveMany and Group.Purge change the cache,
// not the source: the Getter stays the source of truth. Change the source
// first, then the cache (Set with the new value, or Remove), and a Get never
// returns a value older than the last write. What a caller may assume:
//
//   - After a write returns nil (acknowledged), no node serves the value it
//     replaced: a Get that begins after it returns the write's value, or a
//     newer one. Every node was told; a load that was in flight anywhere when
//     the write reached it keeps nothing, and no Get that comes later joins
//     it.
//   - A Get concurrent with a write may return the old value or the new one.
//   - After a write returns an *UpdateError, the nodes it names may still
//     serve the old value until the change reaches them (it is retried in
//     the background), or their copies expire or are evicted; see
//     UpdateError for the others.
//
// What is not promised: a Set's value lives in the owner's memory (and in
// copies), not in the source. If the source does not hold it too, the value
// is lost when the owner evicts it, restarts, or cannot answer: the nodes
// then load the source's value (a fallback, a hedge beside a slow owner, the
// next node on the ring). Writes to one key from several callers at once are
// not ordered among themselves: the last to reach the owner wins.
//
// # Errors
//
// Get returns a *Error that names the group and key and wraps the cause:
// getter.ErrNotFound for a missing key (from this node's Getter or from the
// owner peer, with the owner's own message), a *PanicError for a load that
// panicked, the Getter's error, or ctx's. An error a user sees starts with
// "geecache: " exactly once: the sentinels' own texts have no prefix.
//
// # Peers
//
// A group reaches other nodes through one contract: its PeerPicker names a
// key's owner as a Peer, and everything it asks of a Peer is a PeerRequest
// (OpGet, OpPeek for memory only, OpSet, OpRemove, OpPurge, OpOffer), sent with
// Peer.Do; the answers, and the owner's sign that it is loading, come back
// through a PeerReply. On the far end the transport hands the request to
// Registry.ServePeer, the one way a peer's request enters a node. Package
// cachetest checks that a transport keeps the contract's promises.
//
// The package is pure: it does no I/O of its own and imports no network or
// operating-system package, so it runs unchanged in a server, a serverless
// function, or a WebAssembly runtime (GOOS=wasip1 or js). Transports live in
// their own packages (adapters/nethttp, adapters/lambda), and peer
// selection in package picker.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/reads.md
//   - https://github.com/geecache/geecache/blob/main/docs/writes.md
//   - https://github.com/geecache/geecache/blob/main/docs/configuration.md
//   - https://github.com/geecache/geecache/blob/main/docs/resilience.md
package cache
