package picker

import (
	"math/bits"
	"slices"
)

// maxBucket is the largest run that sortBucket sorts by counting.
const maxBucket = 1 << 16

// sortBucket's digit has about 2^extraBits values per point.
const extraBits = 1

// scratch holds the buffers of sortBucket, reused from bucket to bucket.
type scratch struct {
	points []uint64
	owners []uint32
	count  []uint32
}

// sortBucket sorts points ascending, ties by owner, moving owners along;
// ties must already be ordered by owner. Every point p has base <= p and
// p-base < 2^used. One stable counting pass sorts by the top bits of
// p-base (about one point per value), then each run of points that tie on
// them is sorted in place.
func (s *scratch) sortBucket(points []uint64, owners []uint32, base uint64, used uint) {
	if len(points) <= 32 || len(points) > maxBucket {
		sortRun(points, owners)
		return
	}
	if cap(s.points) < len(points) {
		s.points = make([]uint64, len(points)*5/4)
		s.owners = make([]uint32, len(points)*5/4)
	}
	tp, to := s.points[:len(points)], s.owners[:len(points)]
	d := min(used, uint(bits.Len(uint(len(points))))+extraBits, 16)
	lo := used - d
	mask := uint64(1)<<d - 1
	if len(s.count) < 1<<d {
		s.count = make([]uint32, 1<<d)
	}
	count := s.count[:1<<d]
	clear(count)
	for _, p := range points {
		count[((p-base)>>lo)&mask]++
	}
	sum, most := uint32(0), uint32(0)
	for b, c := range count {
		count[b] = sum
		sum += c
		most = max(most, c)
	}
	for x, p := range points {
		y := count[((p-base)>>lo)&mask]
		count[((p-base)>>lo)&mask]++
		tp[y], to[y] = p, owners[x]
	}
	if lo == 0 || most > 32 {
		copy(points, tp)
		copy(owners, to)
		if lo > 0 {
			for i := 0; i < len(points); {
				j := i + 1
				for j < len(points) && (points[j]-base)>>lo == (points[i]-base)>>lo {
					j++
				}
				sortRun(points[i:j], owners[i:j])
				i = j
			}
		}
		return
	}
	// Copy back with an insertion sort: points move only within their
	// run of at most 32, and most do not move.
	for i, p := range tp {
		o := to[i]
		j := i
		for ; j > 0 && (points[j-1] > p || (points[j-1] == p && owners[j-1] > o)); j-- {
			points[j], owners[j] = points[j-1], owners[j-1]
		}
		points[j], owners[j] = p, o
	}
}

// sortRun sorts points ascending, ties by owner, moving owners along, in
// place, for any input.
func sortRun(points []uint64, owners []uint32) {
	if len(points) <= 32 {
		insertionSort(points, owners)
		return
	}
	var diff uint64
	for _, p := range points {
		diff |= p ^ points[0]
	}
	sortPoints(points, owners, uint(bits.Len64(diff)))
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

// sortPoints sorts points ascending, ties by owner, moving owners along.
// The points differ at most in their low used bits. It sorts in place: a
// most-significant-digit radix sort, insertion sort for short runs.
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
