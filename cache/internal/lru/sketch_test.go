package lru

import "testing"

// mixHash spreads i over 64 bits, as maphash spreads keys.
func mixHash(i uint64) uint64 {
	i = (i ^ i>>33) * 0xff51afd7ed558ccd
	i = (i ^ i>>33) * 0xc4ceb9fe1a85ec53
	return i ^ i>>33
}

// A sketch that grows as a cache fills keeps the counts of the keys held
// and lends none to the keys it never counted. The keys come as a
// offer brings them, each counted twice (its add and its credit), with
// the sketch growing whenever the keys outnumber its capacity, from the
// smallest size up.
func TestSketchGrowLendsNoCounts(t *testing.T) {
	var s sketch
	s.resize(0)
	const held = 4096
	hashes := make([]uint64, 0, held)
	for i := range uint64(held) {
		if len(hashes)+1 > s.capacity {
			s.grow(hashes)
		}
		h := mixHash(i)
		hashes = append(hashes, h)
		s.add(h, 2)
	}
	for i, h := range hashes {
		if est := s.estimate(h); est < 2 {
			t.Fatalf("held key %d: estimate %d after the growth, want at least 2", i, est)
		}
	}
	// A key never counted that the sketch says was used twice ties with
	// every key held, and so would lose no duel to one: count them.
	const others = 100_000
	var lent int
	for i := range uint64(others) {
		if s.estimate(mixHash(held+i)) >= 2 {
			lent++
		}
	}
	// Without growth, the keys held alone fill each row's counters to a
	// quarter at most, so that a key's four counters are all theirs for
	// about 1 key in 250: allow that, and no more.
	if limit := others / 250; lent > limit {
		t.Errorf("%d of %d keys never counted have an estimate of 2 or more after the sketch grew from %d to %d entries; want at most %d",
			lent, others, 64, s.capacity, limit)
	}
}

// grow counts no event towards the halving: the estimates it carries over
// were counted before.
func TestSketchGrowKeepsTheHalvingsPace(t *testing.T) {
	var s sketch
	s.resize(64)
	for i := range uint64(64) {
		s.add(mixHash(i), 3)
	}
	counted := s.counted
	held := make([]uint64, 64)
	for i := range held {
		held[i] = mixHash(uint64(i))
	}
	s.grow(held)
	if s.counted != counted || s.capacity != 128 || s.sample != 1280 {
		t.Errorf("after grow: counted %d (was %d), capacity %d, sample %d; want %d, 128, 1280", s.counted, counted, s.capacity, s.sample, counted)
	}
}

// BenchmarkSketchGrow is how long the writer lock is held at the grow a
// cache makes when it passes 2^19 entries (on a 2-core machine: 38-55 ms,
// as long as the counters' split of before took, 38-43 ms; counting the
// keys in key by key took 121-135 ms).
func BenchmarkSketchGrow(b *testing.B) {
	const n = 1 << 19
	hashes := make([]uint64, n+1)
	for i := range hashes {
		hashes[i] = mixHash(uint64(i))
	}
	for b.Loop() {
		b.StopTimer()
		var s sketch
		s.resize(n)
		for _, h := range hashes {
			s.add(h, 2)
		}
		b.StartTimer()
		s.grow(hashes)
	}
}
