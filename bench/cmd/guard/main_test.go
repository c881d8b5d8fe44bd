package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The guard runs child processes (os/exec copies their output on
// goroutines); none may outlive its command.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
