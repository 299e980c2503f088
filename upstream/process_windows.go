//go:build windows

package upstream

import (
	"os"
	"os/exec"
	"syscall"
)

// On Windows the hub kills only the direct child; process trees need a Job
// Object, which this build does not set up.
func setProcessGroup(*exec.Cmd) {}

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

func signalGroup(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	return p.Kill()
}

func groupAlive(int) bool { return false }

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

func signalPID(pid int, sig syscall.Signal) error { return signalGroup(pid, sig) }
