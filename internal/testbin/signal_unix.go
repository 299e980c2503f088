//go:build unix

package testbin

import "syscall"

// signalable reports whether signal 0 reaches pid: it exists.
func signalable(pid int) bool { return syscall.Kill(pid, 0) == nil }
