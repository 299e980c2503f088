//go:build unix

package upstream

import (
	"errors"
	"os/exec"
	"syscall"
)

// setProcessGroup puts the child in its own process group, so the whole tree
// it starts (npx → npm → node) can be signalled at once.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setParentDeathSignal(cmd.SysProcAttr)
}

// signalGroup sends sig to every process in the group led by pid.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupAlive reports whether any process of the group led by pid exists.
func groupAlive(pid int) bool {
	return syscall.Kill(-pid, 0) == nil
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// signalPID sends sig to the process pid.
func signalPID(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
