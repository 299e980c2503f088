//go:build unix && !linux

package upstream

import (
	"os/exec"
	"syscall"
)

func setParentDeathSignal(*syscall.SysProcAttr) {}

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }
