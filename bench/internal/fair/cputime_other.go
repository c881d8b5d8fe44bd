//go:build !unix

package fair

import "time"

// CPUTime reports that the process's CPU time is unknown here (-1).
func CPUTime() time.Duration { return -1 }
