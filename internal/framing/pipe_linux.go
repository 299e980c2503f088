package framing

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is the capacity GrowPipe asks for: a 100 KiB message then crosses
// a pipe in one write instead of several blocking round trips (the default
// is 64 KiB). 1 MiB is the kernel's default ceiling for unprivileged
// processes (/proc/sys/fs/pipe-max-size).
const pipeSize = 1 << 20

// GrowPipe raises the capacity of the pipe f is an end of. It does nothing
// when f is not a pipe or the kernel refuses.
func GrowPipe(f *os.File) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return
	}
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, pipeSize)
}
