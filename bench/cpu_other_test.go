//go:build !unix

package bench

import "time"

// processCPU reports false: the process's CPU time is not measured here.
func processCPU() (time.Duration, bool) { return 0, false }
