package picker

import (
	"cmp"
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
// them is sorted in place. This is what a ring build spends its time on:
// a comparison sort of the same points takes several times longer.
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
// place, for any input. Long runs are rare (a Hash with many ties, or a
// bucket past maxBucket): they go to the standard library.
func sortRun(points []uint64, owners []uint32) {
	if len(points) <= 32 {
		insertionSort(points, owners)
		return
	}
	type pair struct {
		p uint64
		o uint32
	}
	pairs := make([]pair, len(points))
	for i := range pairs {
		pairs[i] = pair{points[i], owners[i]}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(a.p, b.p), cmp.Compare(a.o, b.o))
	})
	for i, pr := range pairs {
		points[i], owners[i] = pr.p, pr.o
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
