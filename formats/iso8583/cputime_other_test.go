//go:build !unix

package iso8583

import "time"

// cpuTime is not measured on this platform; benchmarks then leave out the
// CPU time per record.
func cpuTime() time.Duration { return 0 }
