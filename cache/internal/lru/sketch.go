package lru

import "math/bits"

// A sketch estimates how often each key hash was seen recently: a
// count-min sketch of four rows of 4-bit counters, four counters per row
// for each entry it is sized for. It halves every counter each time it has
// counted ten events per entry it is sized for, so that old popularity
// fades (TinyLFU's "reset"), and it grows with the cache. It is used only
// under the cache's writer lock.
type sketch struct {
	rows     [sketchDepth][]uint64 // 16 counters of 4 bits per word
	shift    uint                  // 64 - log2(counters per row)
	counted  int                   // events since the last halving
	sample   int                   // events between halvings
	capacity int                   // entries it was sized for
}

const (
	sketchDepth = 4
	sketchWidth = 4 // counters per row for each entry of capacity
	counterMax  = 15
)

// resize makes s fit about n entries and forgets every count.
func (s *sketch) resize(n int) {
	capacity := 64
	for capacity < n {
		capacity *= 2
	}
	width := sketchWidth * capacity
	for i := range s.rows {
		s.rows[i] = make([]uint64, width/16)
	}
	s.shift = uint(64 - bits.TrailingZeros(uint(width)))
	s.counted, s.sample, s.capacity = 0, 10*capacity, capacity
}

// grow doubles the counters per row and keeps every estimate: a row's
// index is the top bits of the mixed hash, so counter n splits into
// counters 2n and 2n+1 of the wider row, which both start at its value.
func (s *sketch) grow() {
	width := 2 * sketchWidth * s.capacity
	for i, old := range s.rows {
		row := make([]uint64, width/16)
		for n := range width / 2 {
			v := old[n>>4] >> (uint(n&15) * 4) & counterMax
			for _, m := range [2]int{2 * n, 2*n + 1} {
				row[m>>4] |= v << (uint(m&15) * 4)
			}
		}
		s.rows[i] = row
	}
	s.shift--
	s.capacity *= 2
	s.sample = 10 * s.capacity
}

// index is hash's counter in row i: the word and the nibble's shift. Each
// row mixes the hash differently (a splitmix64 step with its own offset),
// so that keys colliding in one row rarely collide in the others.
func (s *sketch) index(hash uint64, i int) (word int, shift uint) {
	h := hash + uint64(i+1)*0x9e3779b97f4a7c15
	h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
	h = (h ^ h>>27) * 0x94d049bb133111eb
	n := h >> s.shift
	return int(n >> 4), uint(n&15) * 4
}

// estimate returns the smallest of hash's counters.
func (s *sketch) estimate(hash uint64) uint64 {
	est := uint64(counterMax)
	for i := range s.rows {
		w, sh := s.index(hash, i)
		est = min(est, s.rows[i][w]>>sh&counterMax)
	}
	return est
}

// add counts n events of hash, raising only the counters that hold the
// current minimum (a conservative update, which overestimates less).
func (s *sketch) add(hash uint64, n uint32) {
	for range n {
		est := s.estimate(hash)
		if est == counterMax {
			return
		}
		for i := range s.rows {
			w, sh := s.index(hash, i)
			if s.rows[i][w]>>sh&counterMax == est {
				s.rows[i][w] += 1 << sh
			}
		}
		if s.counted++; s.counted >= s.sample {
			s.halve()
		}
	}
}

// halve divides every counter by two.
func (s *sketch) halve() {
	for i := range s.rows {
		for j, w := range s.rows[i] {
			s.rows[i][j] = w >> 1 & 0x7777777777777777
		}
	}
	s.counted /= 2
}
