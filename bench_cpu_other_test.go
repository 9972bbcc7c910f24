//go:build !unix

package paykit

import "time"

// processCPU is not measured here: the CPU-time ratios read 0.
func processCPU() time.Duration { return 0 }
