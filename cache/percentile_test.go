package cache

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// percentile99 gives what sorting the window and taking the sample at
// index len*99/100 gives, for every window size the hedge delay uses, with
// distinct and with repeated samples.
func TestPercentile99MatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= latencySamples; n++ {
		for _, spread := range []int64{3, 1 << 40} { // many repeats; nearly none
			window := make([]time.Duration, n)
			for i := range window {
				window[i] = time.Duration(r.Int64N(spread))
			}
			sorted := slices.Sorted(slices.Values(window))
			if got, want := percentile99(window), sorted[n*99/100]; got != want {
				t.Fatalf("n=%d spread=%d: percentile99 = %v, sorted window's = %v", n, spread, got, want)
			}
		}
	}
}
