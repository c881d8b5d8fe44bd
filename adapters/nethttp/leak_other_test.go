//go:build !js

package nethttp

import "go.uber.org/goleak"

// leakOptions: no goroutine is expected to outlive the tests.
func leakOptions() []goleak.Option { return nil }
