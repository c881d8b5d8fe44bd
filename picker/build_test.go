package picker

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// refRing builds the ring of nodes by brute force: every point generated,
// the pairs sorted by (point, owner) with the standard library, and the
// index filled bucket by bucket.
func refRing(cfg config, in []string) *ring {
	nodes := sortedNodes(in)
	r := &ring{cfg: cfg, nodes: nodes}
	if len(nodes) == 0 {
		return r
	}
	type pair struct {
		p uint64
		o uint32
	}
	var pairs []pair
	g := newPointGen(cfg)
	for i, n := range nodes {
		seed := nodeSeed(n)
		for j := range cfg.replicas {
			pairs = append(pairs, pair{g.point(seed, j), uint32(i)})
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(a.p, b.p), cmp.Compare(a.o, b.o))
	})
	for _, pr := range pairs {
		r.points = append(r.points, pr.p)
		r.owners = append(r.owners, pr.o)
	}
	// The index as first written: index[b] is the first position whose
	// point's bucket is at least b.
	top := r.points[len(r.points)-1]
	used := 0
	for top>>used != 0 {
		used++
	}
	b := min(len(strconv.FormatUint(uint64(len(r.points)), 2)), 16)
	r.shift = 0
	if used > b {
		r.shift = uint(used - b)
	}
	nb := int(top>>r.shift) + 1
	r.index = make([]uint32, nb+1)
	p := 0
	for bkt := range nb + 1 {
		for p < len(r.points) && int(r.points[p]>>r.shift) < bkt {
			p++
		}
		r.index[bkt] = uint32(p)
	}
	return r
}

// ringDiff describes how a and b differ, or returns "" if they have the
// same nodes, points, owners and index.
func ringDiff(a, b *ring) string {
	switch {
	case !slices.Equal(a.nodes, b.nodes):
		return fmt.Sprintf("nodes %q vs %q", a.nodes, b.nodes)
	case a.cfg.replicas != b.cfg.replicas:
		return fmt.Sprintf("replicas %d vs %d", a.cfg.replicas, b.cfg.replicas)
	case len(a.points) != len(b.points):
		return fmt.Sprintf("%d vs %d points", len(a.points), len(b.points))
	}
	for i := range a.points {
		if a.points[i] != b.points[i] || a.owners[i] != b.owners[i] {
			return fmt.Sprintf("position %d: point %#x owner %d vs point %#x owner %d",
				i, a.points[i], a.owners[i], b.points[i], b.owners[i])
		}
	}
	if a.shift != b.shift || !slices.Equal(a.index, b.index) {
		return fmt.Sprintf("index: shift %d, %d buckets vs shift %d, %d buckets",
			a.shift, len(a.index), b.shift, len(b.index))
	}
	return ""
}

// testHashes are the hashes a ring is built with in tests: the two the
// package offers and some that stress ties, narrow ranges and wrapping.
var testHashes = []struct {
	name string
	h    Hash
}{
	{"xxhash", xxHash},
	{"crc32", CRC32},
	{"coarse-ties", coarse},
	{"constant", func(string) uint64 { return 42 }},
	{"narrow-16-bits", func(s string) uint64 { return xxHash(s) >> 48 }},
	{"high-bits-only", func(s string) uint64 { return xxHash(s) | 0xffff_ff00_0000_0000 }},
	{"wrapped-xxhash", func(s string) uint64 { return xxHash(s) }},
	{"wrapped-crc32", func(s string) uint64 { return CRC32(s) }},
}

func TestBuildMatchesReference(t *testing.T) {
	sizes := []struct{ nodes, reps int }{{1, 1}, {1, 1024}, {3, 7}, {2, 5000}, {50, 64}, {100, 1024}, {5000, 3}}
	for _, h := range testHashes {
		for _, sz := range sizes {
			if testing.Short() && sz.nodes*sz.reps > 100_000 {
				continue
			}
			cfg := config{hash: h.h, replicas: sz.reps}
			nodes := nodeNames(sz.nodes)
			got, want := build(cfg, sortedNodes(nodes)), refRing(cfg, nodes)
			if d := ringDiff(got, want); d != "" {
				t.Errorf("%s, %d nodes x %d replicas: build differs from reference: %s", h.name, sz.nodes, sz.reps, d)
			}
		}
	}
}

// TestIncrementalMatchesFull changes a ring's node set step by step (one
// node in or out, several at once, all replaced) through ring.with and
// Peers.Set, and checks after every step that the result is the ring
// built from scratch for the same set, whatever the order of changes.
func TestIncrementalMatchesFull(t *testing.T) {
	pool := nodeNames(60)
	for _, h := range testHashes {
		for _, reps := range []int{1, 5, 160} {
			cfg := config{hash: h.h, replicas: reps}
			rng := rand.New(rand.NewPCG(uint64(reps), 7))
			set := map[string]bool{}
			var r *ring
			p := mustPeers(pool[0], nil, &Options{Hash: h.h, Replicas: reps})
			for step := range 60 {
				switch k := rng.IntN(10); {
				case k < 4: // one joins
					set[pool[rng.IntN(len(pool))]] = true
				case k < 8: // one leaves
					for n := range set {
						delete(set, n)
						break
					}
				case k < 9: // several change
					for range 5 {
						set[pool[rng.IntN(len(pool))]] = rng.IntN(2) == 0
					}
				default: // all replaced
					clear(set)
					for range 3 {
						set[pool[rng.IntN(len(pool))]] = true
					}
				}
				var nodes []string
				for n, in := range set {
					if in {
						nodes = append(nodes, n)
					}
				}
				rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
				want := build(cfg, sortedNodes(nodes))
				if r == nil {
					r = mustNew(nodes, &Options{Hash: h.h, Replicas: reps})
				} else {
					r = r.with(nodes...)
				}
				if d := ringDiff(r, want); d != "" {
					t.Fatalf("%s, %d replicas, step %d: With(%q) differs from a full build: %s", h.name, reps, step, nodes, d)
				}
				p.Set(nodes...)
				if d := ringDiff(p.state.Load().ring, build(cfg, sortedNodes(append(nodes, pool[0])))); d != "" {
					t.Fatalf("%s, %d replicas, step %d: Peers.Set(%q) differs from a full build: %s", h.name, reps, step, nodes, d)
				}
			}
		}
	}
}

// TestSameNodesReuseRing checks that a change to the same node set (in any
// order) gives back the ring itself, not a copy.
func TestSameNodesReuseRing(t *testing.T) {
	nodes := nodeNames(5)
	r := mustNew(nodes, nil)
	same := append(slices.Clone(nodes), nodes[2], "")
	slices.Reverse(same)
	if r.with(same...) != r {
		t.Error("With(the same nodes) built a new ring")
	}
	if r.with(nodes[1:]...) == r {
		t.Error("With(fewer nodes) returned the ring itself")
	}
	p := mustPeers(nodes[0], nil, nil)
	p.Set(nodes...)
	before := p.state.Load().ring
	p.Set(same...)
	if p.state.Load().ring != before {
		t.Error("Peers.Set(the same nodes) built a new ring")
	}
}

// TestMergeUsed checks that a one-node change goes through merge (so
// that the tests above test it), and that a change of most nodes does not.
func TestMergeUsed(t *testing.T) {
	base := mustNew(nodeNames(10), nil)
	if merge(base, sortedNodes(nodeNames(11))) == nil || merge(base, sortedNodes(nodeNames(9))) == nil {
		t.Error("merge refused a one-node change")
	}
	if merge(base, sortedNodes([]string{"x", "y", "z"})) != nil {
		t.Error("merge accepted a ring with no node in common")
	}
}

// TestStrata checks the layout of xxHash and CRC32 rings: replica j of
// every node lies in the j-th of Replicas equal slices of the hash's range.
func TestStrata(t *testing.T) {
	for _, reps := range []int{2, 3, 50, 1024} {
		width := ^uint64(0)/uint64(reps) + 1
		if reps&(reps-1) != 0 {
			width-- // not a power of two: 2^64/reps rounded down
		}
		for _, h := range hashes {
			if h.name == "crc32" {
				width = 1 << 32 / uint64(reps)
			}
			r := mustNew(nodeNames(7), &Options{Replicas: reps, Hash: h.h})
			for i, p := range r.points {
				if j := i / 7; p/width != uint64(j) {
					t.Fatalf("%s, %d replicas: point %d (%#x) is in stratum %d; want %d", h.name, reps, i, p, p/width, j)
				}
			}
		}
	}
}

func TestSortRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	gens := map[string]func() uint64{
		"uniform":     rng.Uint64,
		"few-values":  func() uint64 { return uint64(rng.IntN(5)) << 40 },
		"low-bits":    func() uint64 { return uint64(rng.IntN(1000)) },
		"high-shared": func() uint64 { return 0xabcd<<48 | uint64(rng.IntN(1<<20)) },
		"one-value":   func() uint64 { return 9 },
	}
	var s scratch
	for name, gen := range gens {
		for _, n := range []int{0, 1, 2, 31, 33, 500, 5000, maxBucket + 10} {
			points := make([]uint64, n)
			owners := make([]uint32, n)
			for i := range points {
				points[i], owners[i] = gen(), uint32(rng.IntN(50))
			}
			// sortBucket's input has ties ordered by owner; sortRun takes any.
			wantP, wantO := sortedPairs(points, owners)
			p, o := slices.Clone(points), slices.Clone(owners)
			sortRun(p, o)
			if !slices.Equal(p, wantP) || !slices.Equal(o, wantO) {
				t.Errorf("sortRun, %s, %d points: not sorted by (point, owner)", name, n)
			}
			p, o = slices.Clone(points), slices.Clone(owners)
			slices.SortStableFunc(o, func(a, b uint32) int { return cmp.Compare(a, b) })
			// Ties in node order: sort pairs by owner first, stably.
			type pair struct {
				p uint64
				o uint32
			}
			pairs := make([]pair, n)
			for i := range pairs {
				pairs[i] = pair{points[i], owners[i]}
			}
			slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.o, b.o) })
			var lo, hi uint64 = ^uint64(0), 0
			for i, pr := range pairs {
				p[i], o[i] = pr.p, pr.o
				lo, hi = min(lo, pr.p), max(hi, pr.p)
			}
			used := uint(0)
			for n > 0 && (hi-lo)>>used != 0 {
				used++
			}
			s.sortBucket(p, o, lo, used)
			if !slices.Equal(p, wantP) || !slices.Equal(o, wantO) {
				t.Errorf("sortBucket, %s, %d points: not sorted by (point, owner)", name, n)
			}
		}
	}
}

// sortedPairs returns points and owners sorted by (point, owner), by the
// standard library.
func sortedPairs(points []uint64, owners []uint32) ([]uint64, []uint32) {
	idx := make([]int, len(points))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(points[a], points[b]), cmp.Compare(owners[a], owners[b]))
	})
	p, o := make([]uint64, len(idx)), make([]uint32, len(idx))
	for i, x := range idx {
		p[i], o[i] = points[x], owners[x]
	}
	return p, o
}
