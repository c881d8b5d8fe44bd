// Package keytest makes keys that break sloppy escaping, for the
// round-trip tests of every binding.
package keytest

import (
	"math/rand/v2"
	"strings"
)

// special are the bytes and segments that escaping schemes and routers get
// wrong: dot segments, slashes, percent signs, query and fragment marks,
// invalid UTF-8, NUL.
var special = [...]string{".", "..", "/", "%", "%2F", "?", "#", " ", "+", "\xff", "\x00", "日本", "./", "/.."}

// Random returns a random byte string from r: often one of the awkward
// strings alone, else a mix of them and random bytes, and now and then a
// long key.
func Random(r *rand.Rand) string {
	if r.IntN(5) == 0 {
		return special[r.IntN(len(special))]
	}
	var b strings.Builder
	for n := r.IntN(40); b.Len() < n; {
		if r.IntN(3) == 0 {
			b.WriteString(special[r.IntN(len(special))])
		} else {
			b.WriteByte(byte(r.IntN(256)))
		}
	}
	if r.IntN(50) == 0 {
		b.WriteString(strings.Repeat("k", 2000))
	}
	return b.String()
}

// Keys returns every awkward string alone, "." and ".." first, then n
// random keys from r: for a round-trip test that must see each awkward
// string at least once, whatever r gives.
func Keys(r *rand.Rand, n int) []string {
	keys := append(make([]string, 0, len(special)+n), special[:]...)
	for range n {
		keys = append(keys, Random(r))
	}
	return keys
}
