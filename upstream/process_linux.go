//go:build linux

package upstream

import (
	"os/exec"
	"runtime"
	"syscall"
)

// setParentDeathSignal makes the kernel SIGKILL the child if the hub dies
// without shutting it down.
func setParentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}

// startCmd starts cmd from a dedicated, never-exiting OS thread. The parent
// death signal fires when the *thread* that forked the child exits, so the
// fork must not happen on a thread the Go runtime may retire.
func startCmd(cmd *exec.Cmd) error {
	done := make(chan error)
	spawnRequests <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan<- error
}

var spawnRequests = make(chan spawnRequest)

func init() {
	// The spawner goroutine lives for the whole process; its thread is never
	// returned to the runtime, so it can never exit while children run.
	go func() {
		runtime.LockOSThread()
		for req := range spawnRequests {
			req.done <- req.cmd.Start()
		}
	}()
}
