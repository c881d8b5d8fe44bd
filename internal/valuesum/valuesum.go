// Package valuesum lets a cached value's checksum, computed once when the
// value entered the cache, reach the protocol server that sends it, so
// that a value served many times is hashed once, not on every serve. It is
// the link between package cache and the bindings' shared protocol code;
// an application never needs it.
//
// The checksum is the xxhash64 of the value, which is the protocol's
// checksum without a secret (with one, the server hashes with SHA-256
// and this package plays no part).
package valuesum

import "io"

// A Sink is an io.Writer that hashes what it is given with xxhash64 and
// can be told the sum instead. cache.ByteView.WriteTo, given a Sink, calls
// Known with the value's kept sum and writes nothing, if the value has
// one; otherwise it writes the value as to any io.Writer.
type Sink interface {
	io.Writer
	Known(sum uint64)
}

// Min is the smallest value whose sum the cache keeps: below it, hashing
// at each serve costs less than looking the sum up.
const Min = 1024
