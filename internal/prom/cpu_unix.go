//go:build unix

package prom

import "syscall"

// cpuSeconds returns the user and system CPU time of the process.
func cpuSeconds() (float64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6, true
}
