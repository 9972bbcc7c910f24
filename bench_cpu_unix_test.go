//go:build unix

package paykit

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the whole process (client, in-process server
// and runtime) has used so far. The kernel accounts it exactly, so unlike
// wall time it barely moves when other work on a shared machine takes the
// cores away: the benchmarks report both.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
