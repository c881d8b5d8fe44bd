package cache_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives its tests: a load
// worker, a hedge or a detached fetch that never ends is a leak.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// the goroutine the js/wasm runtime keeps for JavaScript callbacks
		goleak.IgnoreAnyFunction("runtime.handleEvent"))
}
