//go:build !unix

package host_test

import "time"

// processCPU returns 0: the CPU time of the process is not read here.
func processCPU() time.Duration { return 0 }
