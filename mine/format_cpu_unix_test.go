//go:build unix

package mine

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system, all threads) the test
// process has used, so that a benchmark on a busy machine can report a rate
// per CPU second beside the wall-clock one.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
