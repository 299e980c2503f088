//go:build unix

package sweep

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, released by unlock.
func lockFile(f *os.File) (unlock func(), err error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}

// kill sends SIGKILL to pid.
func kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
