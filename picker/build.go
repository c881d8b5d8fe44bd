package picker

import (
	"encoding/binary"
	"math/bits"
	"reflect"
	"slices"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// A ring is built in one of two ways, with the same result (the same
// points, owners and index) for the same node set:
//
//   - from scratch: every node's points are hashed straight into the
//     ring's arrays, which are then sorted in place by an MSD radix sort;
//     nothing of the ring's size is allocated besides the arrays the ring
//     keeps;
//   - from the previous ring, when most nodes stay: the points of the
//     nodes that join are hashed and sorted on their own and merged with
//     the points that stay, in one linear pass, without hashing or sorting
//     those again.

// nodeSeed is the 64-bit seed from which the points of node name are
// derived. It is xxHash whatever the ring's Hash, so that names that tie
// under a narrow Hash (such as [CRC32]) still get different points.
func nodeSeed(name string) uint64 { return xxhash.Sum64String(name) }

// A pointGen computes node points (virtual nodes) for a Hash.
//
// The point of replica j of the node with a given seed is the Hash of an
// 8-byte label, a strong 64-bit mix of the seed and j. The mix makes
// labels of neighbouring replicas differ in about half their bits; this
// matters for hashes that are linear, like CRC-32, for which labels such
// as strconv.Itoa(j)+name give correlated points that do not even out the
// load however many replicas there are. Hashing the label (rather than
// taking the mix as the point) keeps points in the range of the Hash,
// whatever that range is.
type pointGen struct {
	h   Hash
	xxh bool     // h is XXHash, computed inline
	buf *[8]byte // the label; a Hash must not keep its argument, so reused
}

func newPointGen(h Hash) pointGen {
	return pointGen{
		h:   h,
		xxh: reflect.ValueOf(h).Pointer() == reflect.ValueOf(XXHash).Pointer(),
		buf: new([8]byte),
	}
}

// point returns the point of replica j of the node with the given seed.
func (g pointGen) point(seed uint64, j int) uint64 {
	label := mix64(seed + uint64(j+1)*0x9e3779b97f4a7c15)
	if g.xxh {
		return xxh64Of8(label)
	}
	binary.LittleEndian.PutUint64(g.buf[:], label)
	return g.h(unsafe.String(&g.buf[0], len(g.buf)))
}

// node sets dst[j] to the point of replica j of the node with the given
// seed, for every j < len(dst), and returns the largest.
func (g pointGen) node(seed uint64, dst []uint64) (top uint64) {
	if g.xxh {
		for j := range dst {
			p := xxh64Of8(mix64(seed + uint64(j+1)*0x9e3779b97f4a7c15))
			dst[j] = p
			top = max(top, p)
		}
		return top
	}
	for j := range dst {
		p := g.point(seed, j)
		dst[j] = p
		top = max(top, p)
	}
	return top
}

// xxh64Of8 is XXHash of the 8 bytes of v in little-endian order: xxHash64
// (seed 0) unrolled for an 8-byte input, so that it inlines.
func xxh64Of8(v uint64) uint64 {
	const (
		prime1 uint64 = 11400714785074694791
		prime2 uint64 = 14029467366897019727
		prime3 uint64 = 1609587929392839161
		prime4 uint64 = 9650029242287828579
		prime5 uint64 = 2870177450012600261
	)
	h := prime5 + 8
	h ^= bits.RotateLeft64(v*prime2, 31) * prime1
	h = bits.RotateLeft64(h, 27)*prime1 + prime4
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// mix64 is the SplitMix64 finalizer: a bijection on uint64 with good
// avalanche.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
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
// If old is not nil it must have been built with cfg; when most of its
// nodes stay, the new ring is derived from it (see above).
func rebuild(old *Ring, cfg config, in []string) *Ring {
	nodes := sortedNodes(in)
	if old != nil && len(old.nodes) > 0 && len(nodes) > 0 {
		if r := merge(old, nodes); r != nil {
			return r
		}
	}
	return build(cfg, nodes)
}

// build returns the ring of nodes (sorted, unique, non-empty) from scratch.
//
// Points are hashed twice rather than stored twice: a first pass counts
// them per coarse bucket (their top bits), a second hashes them again
// straight into their bucket's place in the ring's arrays; each bucket
// (about a thousand points, in the CPU cache) is then sorted on its own.
// Sorting a million points in place in one go is slower than hashing
// them again: every move of an in-place radix sort waits on a cache miss.
func build(cfg config, nodes []string) *Ring {
	r := &Ring{cfg: cfg, nodes: nodes}
	if len(nodes) == 0 {
		return r
	}
	reps := cfg.replicas
	n := len(nodes) * reps
	seeds := make([]uint64, len(nodes))
	for i, name := range nodes {
		seeds[i] = nodeSeed(name)
	}
	gen := newPointGen(cfg.hash)
	// Bucket by the top cb of the used bits: about 1024 points a bucket.
	cb := uint(min(max(bits.Len(uint(n))-10, 0), coarseBits))
	count := make([]int, 1<<cb+1)
	pts := make([]uint64, reps) // one node's points
	countPoints := func(shift uint) (top uint64) {
		clear(count)
		for _, seed := range seeds {
			top = max(top, gen.node(seed, pts))
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
	r.points = make([]uint64, n)
	r.owners = make([]uint32, n)
	for i, seed := range seeds {
		gen.node(seed, pts)
		for _, p := range pts {
			x := count[p>>shift]
			count[p>>shift]++
			r.points[x], r.owners[x] = p, uint32(i)
		}
	}
	// Within a bucket, points are in node order, so ties are already
	// ordered by owner; sortBucket keeps them so.
	var s scratch
	lo := 0
	for _, hi := range count {
		s.sortBucket(r.points[lo:hi], r.owners[lo:hi], shift)
		lo = hi
	}
	r.buildIndex()
	return r
}

// coarseBits is the most bits by which build buckets points.
const coarseBits = 10

// scratch holds the buffers of sortBucket, reused from bucket to bucket.
type scratch struct {
	points []uint64
	owners []uint32
}

// sortBucket sorts points ascending, ties by owner, moving owners along;
// ties must already be ordered by owner. The points differ at most in
// their low used bits. One stable counting pass sorts by the top bits of
// those (about one point per value), then each run of points that tie on
// them is sorted in place.
func (s *scratch) sortBucket(points []uint64, owners []uint32, used uint) {
	if len(points) <= 32 || len(points) > 1<<16 {
		sortPoints(points, owners, used)
		return
	}
	if cap(s.points) < len(points) {
		s.points = make([]uint64, len(points)*5/4)
		s.owners = make([]uint32, len(points)*5/4)
	}
	tp, to := s.points[:len(points)], s.owners[:len(points)]
	d := min(used, uint(bits.Len(uint(len(points)))), 11)
	lo := used - d
	mask := uint64(1)<<d - 1
	var count [1 << 11]int
	for _, p := range points {
		count[(p>>lo)&mask]++
	}
	sum, most := 0, 0
	for b, c := range count[:1<<d] {
		count[b] = sum
		sum += c
		most = max(most, c)
	}
	for x, p := range points {
		y := count[(p>>lo)&mask]
		count[(p>>lo)&mask]++
		tp[y], to[y] = p, owners[x]
	}
	copy(points, tp)
	copy(owners, to)
	switch {
	case lo == 0:
	case most <= 32:
		// Points move only within their run, so this costs little.
		insertionSort(points, owners)
	default:
		for i := 0; i < len(points); {
			j := i + 1
			for j < len(points) && points[j]>>lo == points[i]>>lo {
				j++
			}
			sortPoints(points[i:j], owners[i:j], lo)
			i = j
		}
	}
}

// insertionSort sorts points ascending, ties by owner, moving owners along.
func insertionSort(points []uint64, owners []uint32) {
	for i := 1; i < len(points); i++ {
		p, o := points[i], owners[i]
		j := i
		for ; j > 0 && (points[j-1] > p || (points[j-1] == p && owners[j-1] > o)); j-- {
			points[j], owners[j] = points[j-1], owners[j-1]
		}
		points[j], owners[j] = p, o
	}
}

// merge returns the ring of nodes derived from old, or nil when too few
// of old's nodes stay for that to pay off.
func merge(old *Ring, nodes []string) *Ring {
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
	r := &Ring{cfg: cfg, nodes: nodes}
	r.points = make([]uint64, len(nodes)*reps)
	r.owners = make([]uint32, len(nodes)*reps)

	// The joining nodes' points, sorted on their own.
	newPts := make([]uint64, len(added)*reps)
	newOwn := make([]uint32, len(added)*reps)
	var top uint64
	gen := newPointGen(cfg.hash)
	for k, n := range added {
		top = max(top, gen.node(nodeSeed(nodes[n]), newPts[k*reps:(k+1)*reps]))
		for j := range reps {
			newOwn[k*reps+j] = n
		}
	}
	sortPoints(newPts, newOwn, uint(bits.Len64(top)))

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
	out += copy(r.points[out:], newPts[k:])
	copy(r.owners[len(r.owners)-(len(newOwn)-k):], newOwn[k:])
	if out != len(r.points) {
		panic("picker: ring merge lost points") // cannot happen: old and nodes disagree
	}
	r.buildIndex()
	return r
}

// sortPoints sorts points ascending, ties by owner, moving owners along.
// The points differ at most in their low used bits (bits.Len64 of the
// largest). It sorts in place, for any input: a most-significant-digit
// radix sort, insertion sort for short runs.
func sortPoints(points []uint64, owners []uint32, used uint) {
	for len(points) > 32 && used > 0 {
		// Digits of up to 10 bits, fewer for short runs: about 4 points
		// per bucket.
		d := min(used, 10, uint(max(bits.Len(uint(len(points)))-2, 1)))
		shift := used - d
		mask := uint64(1)<<d - 1
		nb := 1 << d
		var start, next [1 << 10]int
		for _, p := range points {
			start[(p>>shift)&mask]++
		}
		sum := 0
		for b := range nb {
			c := start[b]
			start[b], next[b] = sum, sum
			sum += c
		}
		// American flag sort: fill each bucket in turn, sending every
		// point found there to the next free slot of its own bucket.
		for b := range nb {
			end := len(points)
			if b+1 < nb {
				end = start[b+1]
			}
			for next[b] < end {
				x := next[b]
				p, o := points[x], owners[x]
				for t := int((p >> shift) & mask); t != b; t = int((p >> shift) & mask) {
					y := next[t]
					next[t]++
					points[y], p = p, points[y]
					owners[y], o = o, owners[y]
				}
				points[x], owners[x] = p, o
				next[b]++
			}
		}
		// Recurse into every bucket but the largest, and loop on that one,
		// so that the stack stays shallow.
		big := 0
		for b := 1; b < nb; b++ {
			if next[b]-start[b] > next[big]-start[big] {
				big = b
			}
		}
		for b := range nb {
			if b != big {
				sortPoints(points[start[b]:next[b]], owners[start[b]:next[b]], shift)
			}
		}
		points, owners, used = points[start[big]:next[big]], owners[start[big]:next[big]], shift
	}
	if used == 0 {
		// All points are equal: order by owner.
		slices.Sort(owners)
		return
	}
	insertionSort(points, owners)
}
