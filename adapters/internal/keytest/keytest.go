// Package keytest is internal/keytest under its former path, for the
// tests of the bindings that import it from here; new code imports
// internal/keytest (which examples/ can reach too).
package keytest

import (
	"math/rand/v2"

	"github.com/geecache/geecache/internal/keytest"
)

// Random is keytest.Random.
func Random(r *rand.Rand) string { return keytest.Random(r) }

// Keys is keytest.Keys.
func Keys(r *rand.Rand, n int) []string { return keytest.Keys(r, n) }
