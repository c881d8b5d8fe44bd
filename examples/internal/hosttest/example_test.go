//go:build !js

package hosttest_test

import (
	"fmt"

	"github.com/geecache/geecache/examples/internal/hosttest"
)

// The keys Cluster asks every host's node for: the tutorial's scores first.
func ExampleClusterKeys() {
	ks := hosttest.ClusterKeys()
	fmt.Println(ks[0], ks[3], len(ks))
	// Output: Tom key-000 63
}
