//go:build unix

package intake

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, user and system, across all its threads (GC
// included). Benchmarks report it per op because the wall clock on a shared machine also counts
// other people's work.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
