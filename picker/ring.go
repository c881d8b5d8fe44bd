// Package picker chooses which node owns a key.
//
// A [Peers] value places its nodes on a consistent-hash ring with virtual
// nodes: every node is placed on a 64-bit circle many times, and a key
// belongs to the first node point at or after the key's hash. Adding or
// removing a node moves only the keys that the node gains or loses.
// Placement depends only on the set of node names, the hash function and
// the replica count, never on the order in which nodes were given, so every
// node of a cluster that is configured with the same list agrees on who
// owns which key.
//
// Peers is a [cache.PeerPicker] for any transport: it maps the owner of a
// key to a [cache.Peer] built by a constructor the transport
// supplies, and its peer list can be replaced at run time while lookups go
// on. With no constructor and an empty self it is a plain ring:
// [Peers.Owner] names the owner of a key.
//
// The package is pure (no network, file or process access), so it builds
// and runs under WebAssembly as well as natively.
//
// The guide to it, by topic:
//
//   - https://github.com/geecache/geecache/blob/main/docs/operations.md
package picker

import (
	"cmp"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math/bits"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/geecache/geecache/cache"
)

// defaultReplicas is the number of points each node gets on the ring when
// [Options].Replicas is 0 (the field's doc states it). It was chosen by measurement, as the load
// spread (the busiest node's share of the circle divided by the mean
// share) of ten-node rings over 300 random sets of node names
// (TestReplicaSpreadOverNameSets, with xxHash and CRC32 alike): with 160
// replicas the median spread is 1.11 and 64% of the sets exceed 1.10;
// with 512 the median is 1.07 and 7% of the sets exceed 1.10; with 1024
// the median is 1.04, the worst of the 300 sets 1.096, and none exceed
// 1.10. The cost is memory (12 bytes per point, so 120 KiB for ten nodes
// and 12 MiB for a thousand) and build time, not lookup time.
const defaultReplicas = 1024

// A Hash maps a key to a point on the ring. It must be deterministic and
// the same on every node of a cluster, must not keep key, and should spread
// its results evenly over its range. A Hash whose results fit in fewer than
// 64 bits (such as [CRC32]) works: the ring adapts its index to the largest
// point.
type Hash func(key string) uint64

// xxHash is the 64-bit xxHash of s. It is the default [Hash] (a nil
// Options.Hash): fast, allocation free and well distributed.
func xxHash(s string) uint64 { return xxhash.Sum64String(s) }

// CRC32 is the IEEE CRC-32 of s (crc32.ChecksumIEEE, the hash of the
// original GeeCache) widened to uint64. It does not allocate. Its points lie
// in [0, 2^32), so collisions are more likely than with the default
// (xxHash); ties are resolved deterministically, by node name.
func CRC32(s string) uint64 {
	// The slice aliases the string's bytes; crc32 only reads it.
	return uint64(crc32.ChecksumIEEE(unsafe.Slice(unsafe.StringData(s), len(s))))
}

// Options configures a [Peers]. The zero value of each field
// means its default, and a nil *Options means all defaults (see
// cache.GroupOptions for why GeeCache is configured with structs). Every
// node of a cluster must use the same options, or they disagree on owners.
type Options struct {
	// Hash maps keys and node points onto the ring. Nil means the 64-bit xxHash, fast and well
	// distributed.
	Hash Hash

	// Replicas is how many points (virtual nodes) each node gets on the
	// ring. 0 means 1024; a negative value is an error.
	Replicas int

	// Normalize, if not nil, checks an address given to NewPeers (self)
	// or Peers.Set and returns it as the ring knows it, so that two
	// spellings of one node are one node; an error fails the call (Set
	// keeps the old list). A transport plugs in its own: URLs in lower
	// case without a default port, say. Nil takes addresses as given.
	Normalize func(addr string) (string, error)

	// Logger receives the changes of the peer list, at debug level: they
	// are routine (a discovery that applies one logs it itself). Nil means
	// slog.Default().
	Logger *slog.Logger

	// HandoffWindow is how long after a change of the peer list
	// [Peers.PickFallback] names a key's previous owner, so that the new
	// owner of a key that moved asks the node that held it before loading
	// it from the source. 0 means 30 s; a negative value is an error.
	HandoffWindow time.Duration

	// Handoff turns the previous owner on: PickFallback names one only
	// when it is set. Set it when the getters newGetter returns send a
	// memory-only request when a group asks for one (see
	// adapters/PROTOCOL.md, "Memory-only requests"), for a Get and for a
	// Batch, as nethttp's do: nethttp.Pool sets it. With a Peer that
	// sends an ordinary request instead, the previous owner would load the
	// key for it.
	Handoff bool

	// OnChange, if not nil, is called by Set after it changed the node set
	// (not after a Set of the same nodes), with Set's lock held: it must
	// return quickly and must not call Set. nethttp.Pool uses it to hand
	// the keys that moved over to their new owners (see
	// adapters/PROTOCOL.md, "Offer").
	OnChange func()
}

// defaultHandoffWindow is Options.HandoffWindow when it is 0.
const defaultHandoffWindow = 30 * time.Second

type config struct {
	hash     Hash
	replicas int
	window   time.Duration // HandoffWindow; 0 without Handoff
}

func newConfig(o *Options) (config, error) {
	c := config{hash: xxHash, replicas: defaultReplicas}
	if o == nil {
		return c, nil
	}
	if o.Replicas < 0 {
		return c, fmt.Errorf("geecache: %w: Replicas %d is negative", cache.ErrConfig, o.Replicas)
	}
	if o.HandoffWindow < 0 {
		return c, fmt.Errorf("geecache: %w: HandoffWindow %v is negative", cache.ErrConfig, o.HandoffWindow)
	}
	if o.Handoff {
		c.window = cmp.Or(o.HandoffWindow, defaultHandoffWindow)
	}
	c.replicas = cmp.Or(o.Replicas, defaultReplicas)
	if o.Hash != nil {
		c.hash = o.Hash
	}
	return c, nil
}

// A ring is an immutable consistent-hash ring, the snapshot a [Peers]
// looks keys up in. Build one with newRing; it is read-only afterwards and
// safe for concurrent use. To change the node set, build a new ring (see
// ring.with).
//
// A node's points are derived from its name alone (build.go says how).
// Points that tie on a hash value are ordered by node name, so the node
// with the smallest name wins the tie on every machine.
//
// Building a ring of n nodes takes time linear in n times Replicas and
// allocates 12 bytes per point and little else; a node joining or leaving
// costs a merge with the previous ring, not a rebuild.
type ring struct {
	cfg    config
	nodes  []string // sorted, unique, non-empty names
	points []uint64 // sorted ascending; ties ordered by node name
	owners []uint32 // owners[i] indexes nodes: the owner of points[i]
	// index[b] is the first position i with points[i]>>shift >= b, for
	// b in [0, len(index)); a key hash h with h>>shift = b is looked up in
	// points[index[b]:index[b+1]] only.
	index []uint32
	shift uint
}

// newRing builds a ring of the given nodes. Duplicate and empty names are
// ignored, and the order of nodes does not matter. opts may be nil for the
// defaults; newRing fails only for options that cannot work.
func newRing(nodes []string, opts *Options) (*ring, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return build(c, sortedNodes(nodes)), nil
}

// with returns a ring with the same hash and replica count as r and the
// given nodes. r is not changed; if the node set is r's, the result is r
// itself (a ring is immutable). When most of r's nodes stay, with reuses
// r's sorted points instead of building the ring from scratch; the result
// is the same.
func (r *ring) with(nodes ...string) *ring { return rebuild(r, r.cfg, nodes) }

// buildIndex fills r.index and r.shift (see ring) for r.points.
func (r *ring) buildIndex() {
	f := r.newIndex(r.points[len(r.points)-1])
	f.add(r.points, 0)
	f.finish()
}

// newIndex sets r.shift and allocates r.index for len(r.points) points of
// which top is the largest: about one bucket per point (at most 2^16
// buckets), over the range actually used by the points. The caller fills
// the index with the returned indexFill.
func (r *ring) newIndex(top uint64) *indexFill {
	b := min(bits.Len(uint(len(r.points))), 16)
	used := uint(bits.Len64(top))
	r.shift = 0
	if used > uint(b) {
		r.shift = used - uint(b)
	}
	r.index = make([]uint32, int(top>>r.shift)+2)
	return &indexFill{index: r.index, shift: r.shift, n: len(r.points)}
}

// An indexFill fills a ring's index from its sorted points, given in
// order, a run at a time.
type indexFill struct {
	index []uint32
	shift uint
	n     int // number of points
	next  int // the first bucket not filled yet
}

// add fills the buckets up to that of the last of points, which start at
// position base in the ring.
func (f *indexFill) add(points []uint64, base int) {
	index, shift, next := f.index, f.shift, f.next
	for x, p := range points {
		for b := int(p >> shift); next <= b; next++ {
			index[next] = uint32(base + x)
		}
	}
	f.next = next
}

// finish fills the buckets past the last point.
func (f *indexFill) finish() {
	for ; f.next < len(f.index); f.next++ {
		f.index[f.next] = uint32(f.n)
	}
}

// lookup returns the position in r.points of the owner of key, or -1 for
// an empty ring.
func (r *ring) lookup(key string) int {
	if len(r.points) == 0 {
		return -1
	}
	h := r.cfg.hash(key)
	bkt := h >> r.shift
	if bkt >= uint64(len(r.index)-1) {
		return 0 // past the last point: wrap around
	}
	lo, hi := int(r.index[bkt]), int(r.index[bkt+1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.points[m] < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(r.points) {
		return 0
	}
	return lo
}

// owner returns the node that owns key, or "" when the ring has no nodes.
// It does not allocate.
func (r *ring) owner(key string) string {
	i := r.lookup(key)
	if i < 0 {
		return ""
	}
	return r.nodes[r.owners[i]]
}
