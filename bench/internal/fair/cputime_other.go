//go:build !unix

package fair

import "time"

// cpuTime reports that the process's CPU time is unknown here.
func cpuTime() time.Duration { return -1 }
