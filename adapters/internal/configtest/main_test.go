package configtest

import (
	"testing"

	"go.uber.org/goleak"
)

// The constructors that fail must leave no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
