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
//
// It reaches the descriptor through SyscallConn, not f.Fd: Fd puts the file
// into blocking mode and takes it out of the runtime poller, after which
// Close no longer wakes a Read or Write in progress and deadlines stop
// working. A reader of an upstream's stdout would then block for as long as
// any process (a daemon the upstream started) holds the other end open.
func GrowPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if err := unix.Fstat(int(fd), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return
		}
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
	})
}
