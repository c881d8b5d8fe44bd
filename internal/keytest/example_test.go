package keytest_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/geecache/geecache/internal/keytest"
)

func ExampleRandom() {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 1000 {
		seen[keytest.Random(r)] = true
	}
	fmt.Println(seen[".."], seen["%"], len(seen) > 500)
	// Output: true true true
}

func ExampleKeys() {
	keys := keytest.Keys(rand.New(rand.NewPCG(1, 2)), 100)
	fmt.Printf("%q %q %d\n", keys[0], keys[1], len(keys))
	// Output: "." ".." 114
}
