package prom

import "syscall"

// cpuSeconds returns the user and system CPU time of the process.
func cpuSeconds() (float64, bool) {
	h, err := syscall.GetCurrentProcess()
	if err != nil {
		return 0, false
	}
	var created, exited, kernel, user syscall.Filetime
	if syscall.GetProcessTimes(h, &created, &exited, &kernel, &user) != nil {
		return 0, false
	}
	// A Filetime counts 100-nanosecond intervals.
	ticks := func(f syscall.Filetime) float64 { return float64(uint64(f.HighDateTime)<<32 | uint64(f.LowDateTime)) }
	return (ticks(kernel) + ticks(user)) / 1e7, true
}
