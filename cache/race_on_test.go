//go:build race

package cache_test

// raceEnabled: under the race detector sync.Pool drops items at random, so
// allocation figures are not asserted.
const raceEnabled = true
