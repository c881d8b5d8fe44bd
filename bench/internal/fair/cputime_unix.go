//go:build unix

package fair

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user and system) the process has used so
// far, in all its threads, or -1 if it cannot tell.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
