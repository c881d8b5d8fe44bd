//go:build !js

package lambdatest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the tests leave no goroutine behind: every Front,
// runtime and client they start is stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
