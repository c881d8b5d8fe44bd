package picker

import (
	"encoding/binary"
	"math/bits"
	"reflect"
	"slices"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// How a ring is built.
//
// Every node gets cfg.replicas points, derived from one 64-bit seed per
// node (xxHash of its name) by SplitMix64: u_j = mix64(seed + (j+1)*golden)
// for replica j. How u_j becomes a point depends on the Hash:
//
//   - With xxHash (the default) and [CRC32], whose results spread over
//     [0, 2^64) and [0, 2^32), that range is cut into cfg.replicas equal
//     strata and replica j of every node lies in stratum j, at offset u_j
//     scaled to the stratum's width. Every stratum then holds exactly one
//     point per node, so the sorted ring is the strata one after another,
//     each sorted on its own: building it takes one pass that writes the
//     points in place and a sort of each stratum (as many points as
//     nodes, in the CPU cache).
//   - With any other Hash, whose range the ring does not know, the point
//     is the Hash of the 8 bytes of u_j, so that points and keys share a
//     range. Points are then counted per
//     coarse bucket (their top bits) in a first pass, hashed again straight
//     into their bucket's place in the ring's arrays in a second, and each
//     bucket is sorted on its own. Sorting a million points in place in
//     one go would be slower than hashing them twice: every move of an
//     in-place radix sort waits on a cache miss.
//
// Neither allocates anything of the ring's size besides the arrays the
// ring keeps. When most nodes of the previous ring stay (see [rebuild]),
// the points of the nodes that join are built as a ring of their own
// and merged with the points that stay in one linear pass, without
// generating or sorting those again. All ways give the same points, owners
// and index for the same node set.

// golden is 2^64 divided by the golden ratio, SplitMix64's increment.
const golden = 0x9e3779b97f4a7c15

// nodeSeed is the 64-bit seed from which the points of node name are
// derived. It is xxHash whatever the ring's Hash, so that names that tie
// under a narrow Hash (such as [CRC32]) still get different points.
func nodeSeed(name string) uint64 { return xxhash.Sum64String(name) }

// mix64 is the SplitMix64 finalizer: a bijection on uint64 with good
// avalanche. The labels mix64(seed + (j+1)*golden) of neighbouring
// replicas differ in about half their bits; this matters for hashes that
// are linear, like CRC-32, for which labels such as strconv.Itoa(j)+name
// give correlated points that do not even out the load however many
// replicas there are.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// A pointGen computes node points (virtual nodes) for a configuration.
type pointGen struct {
	h      Hash
	strata bool     // h is xxHash or CRC32: points are stratified
	width  uint64   // with strata: the range / replicas, or 0 for 2^64
	buf    *[8]byte // the label; a Hash must not keep its argument, so reused
}

func newPointGen(cfg config) pointGen {
	g := pointGen{h: cfg.hash, buf: new([8]byte)}
	reps := uint64(cfg.replicas)
	switch reflect.ValueOf(cfg.hash).Pointer() {
	case reflect.ValueOf(xxHash).Pointer():
		g.strata = true
		if reps > 1 {
			g.width, _ = bits.Div64(1, 0, reps) // 2^64 / reps
		}
	case reflect.ValueOf(CRC32).Pointer():
		g.strata = reps <= 1<<32
		g.width = 1 << 32 / reps
	}
	return g
}

// point returns the point of replica j of the node with the given seed.
func (g pointGen) point(seed uint64, j int) uint64 {
	u := mix64(seed + uint64(j+1)*golden)
	if g.strata {
		return g.inStratum(j, u)
	}
	binary.LittleEndian.PutUint64(g.buf[:], u)
	return g.h(unsafe.String(&g.buf[0], len(g.buf)))
}

// inStratum returns the point at offset u/2^64 of stratum j's width into
// stratum j (for one stratum of the whole 64-bit range, u).
func (g pointGen) inStratum(j int, u uint64) uint64 {
	if g.width == 0 {
		return u
	}
	off, _ := bits.Mul64(u, g.width)
	return uint64(j)*g.width + off
}

// node sets dst[j] to the point of replica j of the node with the given
// seed, for every j < len(dst), and returns the largest.
func (g pointGen) node(seed uint64, dst []uint64) (top uint64) {
	for j := range dst {
		p := g.point(seed, j)
		dst[j] = p
		top = max(top, p)
	}
	return top
}

// sortedNodes returns the non-empty names of in, sorted and unique, in a
// new slice.
func sortedNodes(in []string) []string {
	nodes := make([]string, 0, len(in))
	for _, n := range in {
		if n != "" {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	return slices.Clip(slices.Compact(nodes))
}

// rebuild returns the ring of the nodes in, with the configuration cfg.
// If old is not nil it must have been built with cfg: it is returned as it
// is if it has the same nodes (rings are immutable), and when most of its
// nodes stay, the new ring is derived from it (see above).
func rebuild(old *ring, cfg config, in []string) *ring {
	nodes := sortedNodes(in)
	if old != nil && slices.Equal(old.nodes, nodes) {
		return old
	}
	if old != nil && len(old.nodes) > 0 && len(nodes) > 0 {
		if r := merge(old, nodes); r != nil {
			return r
		}
	}
	return build(cfg, nodes)
}

// build returns the ring of nodes (sorted, unique, non-empty) from scratch.
func build(cfg config, nodes []string) *ring {
	r := &ring{cfg: cfg, nodes: nodes}
	if len(nodes) == 0 {
		return r
	}
	seeds := make([]uint64, len(nodes))
	for i, name := range nodes {
		seeds[i] = nodeSeed(name)
	}
	r.points = make([]uint64, len(nodes)*cfg.replicas)
	r.owners = make([]uint32, len(nodes)*cfg.replicas)
	if g := newPointGen(cfg); g.strata {
		r.fillStrata(g, seeds)
	} else {
		r.fillHashed(g, seeds)
	}
	return r
}

// fillStrata fills r's points, owners and index with stratified points.
func (r *ring) fillStrata(g pointGen, seeds []uint64) {
	n := len(seeds)
	for j := range r.cfg.replicas {
		pts, own := r.points[j*n:(j+1)*n], r.owners[j*n:(j+1)*n]
		for i, seed := range seeds {
			pts[i], own[i] = g.inStratum(j, mix64(seed+uint64(j+1)*golden)), uint32(i)
		}
	}
	used := uint(64) // offsets within a stratum are below 2^used
	if g.width != 0 {
		used = uint(bits.Len64(g.width - 1))
	}
	f := r.newIndex(slices.Max(r.points[len(r.points)-n:]))
	var s scratch
	for j := range r.cfg.replicas {
		// Each stratum is in node order, so ties are ordered by owner.
		pts, own := r.points[j*n:(j+1)*n], r.owners[j*n:(j+1)*n]
		s.sortBucket(pts, own, uint64(j)*g.width, used)
		f.add(pts, j*n)
	}
	f.finish()
}

// fillHashed fills r's points, owners and index with hashed points.
func (r *ring) fillHashed(g pointGen, seeds []uint64) {
	reps, n := r.cfg.replicas, len(r.points)
	// Bucket by the top cb of the used bits: about 2^bucketBits points a
	// bucket.
	cb := uint(min(max(bits.Len(uint(n))-bucketBits, 0), coarseBits))
	count := make([]int, 1<<cb+1)
	pts := make([]uint64, reps) // one node's points
	countPoints := func(shift uint) (top uint64) {
		clear(count)
		for _, seed := range seeds {
			top = max(top, g.node(seed, pts))
			for _, p := range pts {
				count[p>>shift]++
			}
		}
		return top
	}
	// Count assuming the points use all 64 bits (they nearly always do
	// with a 64-bit hash); count again if they do not.
	used := uint(64)
	top := countPoints(used - cb)
	if u := uint(bits.Len64(top)); u < used {
		cb = min(cb, u)
		used = u
		countPoints(used - cb)
	}
	shift := used - cb
	// count[b] becomes the start of bucket b, then its end as it fills.
	sum := 0
	for b, c := range count {
		count[b] = sum
		sum += c
	}
	for i, seed := range seeds {
		g.node(seed, pts)
		for _, p := range pts {
			x := count[p>>shift]
			count[p>>shift]++
			r.points[x], r.owners[x] = p, uint32(i)
		}
	}
	f := r.newIndex(top)
	var s scratch
	lo := 0
	for b, hi := range count {
		// Each bucket is in node order, so ties are ordered by owner.
		s.sortBucket(r.points[lo:hi], r.owners[lo:hi], uint64(b)<<shift, shift)
		f.add(r.points[lo:hi], lo)
		lo = hi
	}
	f.finish()
}

// build puts about 2^bucketBits points in a bucket, in at most
// 2^coarseBits buckets.
const (
	bucketBits = 12
	coarseBits = 8
)

// merge returns the ring of nodes derived from old, or nil when too few
// of old's nodes stay for that to pay off.
func merge(old *ring, nodes []string) *ring {
	// remap[i] is the index in nodes of old.nodes[i], or -1 if it leaves;
	// added lists the indexes in nodes of the nodes that join.
	remap := make([]int32, len(old.nodes))
	var added []uint32
	i, j := 0, 0
	for i < len(old.nodes) || j < len(nodes) {
		switch {
		case j == len(nodes) || (i < len(old.nodes) && old.nodes[i] < nodes[j]):
			remap[i] = -1
			i++
		case i == len(old.nodes) || nodes[j] < old.nodes[i]:
			added = append(added, uint32(j))
			j++
		default:
			remap[i] = int32(j)
			i, j = i+1, j+1
		}
	}
	stay := len(nodes) - len(added)
	if stay == 0 || len(added) > stay {
		return nil
	}
	cfg := old.cfg
	reps := cfg.replicas
	r := &ring{cfg: cfg, nodes: nodes}
	r.points = make([]uint64, len(nodes)*reps)
	r.owners = make([]uint32, len(nodes)*reps)

	// The joining nodes' points, sorted on their own.
	newPts := make([]uint64, len(added)*reps)
	newOwn := make([]uint32, len(added)*reps)
	gen := newPointGen(cfg)
	for k, n := range added {
		gen.node(nodeSeed(nodes[n]), newPts[k*reps:(k+1)*reps])
		for j := range reps {
			newOwn[k*reps+j] = n
		}
	}
	sortRun(newPts, newOwn)

	// One pass over old's points, dropping those of leaving nodes and
	// renumbering the rest, merged with the new points by (point, owner):
	// the order of a full build, since owners are numbered by name.
	out, k := 0, 0
	for x, p := range old.points {
		o := remap[old.owners[x]]
		if o < 0 {
			continue
		}
		for k < len(newPts) && (newPts[k] < p || (newPts[k] == p && newOwn[k] < uint32(o))) {
			r.points[out], r.owners[out] = newPts[k], newOwn[k]
			out, k = out+1, k+1
		}
		r.points[out], r.owners[out] = p, uint32(o)
		out++
	}
	copy(r.owners[out:], newOwn[k:])
	out += copy(r.points[out:], newPts[k:])
	if out != len(r.points) {
		panic("picker: ring merge lost points") // cannot happen: old and nodes disagree
	}
	r.buildIndex()
	return r
}
