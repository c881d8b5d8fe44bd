package lru

import "math/bits"

// A sketch estimates how often each key hash was seen recently: a
// count-min sketch of four rows of 4-bit counters, four counters per row
// for each entry it is sized for. It halves every counter each time it has
// counted ten events per entry it is sized for, so that old popularity
// fades (TinyLFU's "reset"), and it grows with the cache. It is used only
// under the cache's writer lock, or as a private copy (Keys).
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

// grow doubles the counters per row and keeps the estimates of the keys
// the cache holds, whose hashes are held, and only theirs: it counts each
// of them afresh in the wider rows, from its estimate in the narrow ones.
// Splitting each counter into the two it becomes, both keeping its value,
// would keep every estimate, but it would also give each key that falls in
// either half the counts of all the keys that shared the counter. A cache
// that fills, or takes thousands of keys at once in an offer, grows
// through sizes where many keys share each counter, and those borrowed
// counts then decide its duels until the halvings wash them out
// (BenchmarkRollSim in bench/: a surge roll's extra loads per key held
// 0.39-0.41 with split counters, 0.27 with this). A key that is not held
// loses its counts, which only a cache still filling up does.
func (s *sketch) grow(held []uint64) {
	narrow, counted := *s, s.counted
	s.resize(2 * s.capacity)
	// Row by row: first each held key's estimate, the least of its
	// counters in the narrow rows, then that estimate into each wide row.
	// The counters of consecutive keys are far apart, and one row at a
	// time stays in the processor's cache where four do not: at 2^19
	// entries this grow holds the writer lock as long as splitting the
	// counters did (BenchmarkSketchGrow), where key by key took three
	// times as long.
	est := make([]uint8, len(held))
	for k, hash := range held {
		w, sh := narrow.index(hash, 0)
		est[k] = uint8(narrow.rows[0][w] >> sh & counterMax)
	}
	for i := 1; i < sketchDepth; i++ {
		for k, hash := range held {
			w, sh := narrow.index(hash, i)
			est[k] = min(est[k], uint8(narrow.rows[i][w]>>sh&counterMax))
		}
	}
	for i := range s.rows {
		for k, hash := range held {
			if e := uint64(est[k]); e > 0 {
				w, sh := s.index(hash, i)
				if s.rows[i][w]>>sh&counterMax < e {
					s.rows[i][w] = s.rows[i][w]&^(counterMax<<sh) | e<<sh
				}
			}
		}
	}
	s.counted = counted
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
