package singleflight

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives its tests: every
// worker ends after its idle time.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// the goroutine the js/wasm runtime keeps for JavaScript callbacks
		goleak.IgnoreAnyFunction("runtime.handleEvent"))
}
